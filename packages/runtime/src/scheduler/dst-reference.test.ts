import { describe, expect, it } from "vitest";
import { parseCron, type CronExpression } from "./cron-parse.js";
import { nextCronTick } from "./next-tick.js";
import { offsetAt } from "./zone.js";

/**
 * Checks nextCronTick against a brute-force reading of the DST rules, minute by minute, around every clock
 * change of a year in zones with unusual changes. The reference shares only the zone's offsets (Intl).
 */
const MINUTE = 60_000;

function matches(cron: CronExpression, wall: number): boolean {
  const d = new Date(wall);
  const dom = cron.daysOfMonth[d.getUTCDate()] === true;
  const dow = cron.daysOfWeek[d.getUTCDay()] === true;
  return (
    cron.minutes[d.getUTCMinutes()] === true &&
    cron.hours[d.getUTCHours()] === true &&
    cron.months[d.getUTCMonth() + 1] === true &&
    (cron.daysOred ? dom || dow : dom && dow)
  );
}

/** Every tick in [from, to): walls that exist fire (a repeated one once unless every hour matches); skipped walls fire moved by the jump. */
function reference(cron: CronExpression, zone: string, from: number, to: number): number[] {
  const ticks = new Set<number>();
  const seenWalls = new Set<number>();
  let previousOffset = offsetAt(zone, from - MINUTE);
  for (let t = from; t < to; t += MINUTE) {
    const offset = offsetAt(zone, t);
    if (offset > previousOffset) {
      // The clock jumped forward at t: walls [t + previousOffset, t + offset) never happened.
      for (let wall = t + previousOffset; wall < t + offset; wall += MINUTE) {
        if (matches(cron, wall)) ticks.add(t + (wall - (t + previousOffset)));
      }
    }
    const wall = t + offset;
    // A wall seen at an earlier instant is its second occurrence (the clock went back).
    const repeated = seenWalls.has(wall);
    if (matches(cron, wall) && (!repeated || cron.everyHour)) ticks.add(t);
    seenWalls.add(wall);
    previousOffset = offset;
  }
  return [...ticks].filter((t) => t >= from && t < to).sort((a, b) => a - b);
}

function computed(cron: CronExpression, zone: string, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = nextCronTick(cron, zone, from - 1); t !== null && t < to; t = nextCronTick(cron, zone, t)) out.push(t);
  return out;
}

/** Instants (to the minute) where the zone's offset changes during `year`. */
function transitions(zone: string, year: number): number[] {
  const found: number[] = [];
  let t = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  let offset = offsetAt(zone, t);
  for (; t < end; t += 3_600_000) {
    const next = offsetAt(zone, t + 3_600_000);
    if (next === offset) continue;
    let lo = t;
    let hi = t + 3_600_000;
    while (hi - lo > MINUTE) {
      const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
      if (offsetAt(zone, mid) === offset) lo = mid;
      else hi = mid;
    }
    found.push(hi);
    offset = next;
  }
  return found;
}

const CASES: [zone: string, year: number][] = [
  ["America/New_York", 2024],
  ["Europe/Berlin", 2024],
  ["America/Mexico_City", 2021],
  ["Australia/Lord_Howe", 2024],
  // Changes at midnight, so the skipped and repeated walls cross a date.
  ["America/Santiago", 2024],
  // A two-hour summer shift.
  ["Antarctica/Troll", 2024],
  // Skipped a whole calendar day (30 December 2011).
  ["Pacific/Apia", 2011],
];

const EXPRESSIONS = ["30 2 * * *", "0 1 * * *", "45 1 * * *", "30 * * * *", "*/15 * * * *", "0 0 * * *", "59 23 * * *", "0,30 0-3 * * *", "*/7 1-2 * * *", "0 */2 * * *", "15 2 * * sun"];

describe("next tick against a minute-by-minute reading of the rules", () => {
  for (const [zone, year] of CASES) {
    it(`${zone} ${year}`, () => {
      const changes = transitions(zone, year);
      expect(changes.length).toBeGreaterThan(0);
      for (const change of changes) {
        const from = change - 30 * 3_600_000;
        const to = change + 30 * 3_600_000;
        for (const expression of EXPRESSIONS) {
          const cron = parseCron(expression);
          const want = reference(cron, zone, from, to).map((t) => new Date(t).toISOString());
          const got = computed(cron, zone, from, to).map((t) => new Date(t).toISOString());
          expect(got, `${expression} in ${zone} around ${new Date(change).toISOString()}`).toEqual(want);
        }
      }
    });
  }
});
