import { Cron } from "croner";
import type { CronExpression } from "./cron-parse.js";
import { offsetAt, resolveWall } from "./zone.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A day-of-week restriction with Feb 29 can wait 28 years; nothing valid waits longer than this. */
const HORIZON_YEARS = 60;

/**
 * The first tick strictly after `after` (epoch ms) for `cron` read in `zone`, or null past the horizon.
 *
 * DST rules:
 *  - a wall time the clock skips fires once, moved forward by the jump (02:30 → 03:30 in a one-hour gap);
 *  - a wall time that happens twice fires at its first occurrence only, unless every hour matches
 *    (`*` in the hour field), in which case it fires in both, so the job keeps running every real hour.
 *
 * Candidates are walked in wall-clock order; instants are almost monotone in wall time, with two exceptions:
 * the second occurrence of a repeated hour, and a skipped wall time moved forward by a jump that is not a
 * whole number of the expression's steps; either can come after a later wall time's instant. An ordinary
 * candidate is therefore the answer; the two exceptions are kept only until a later wall time proves that
 * nothing earlier follows.
 */
export function nextCronTick(cron: CronExpression, zone: string, after: number): number | null {
  const current = offsetAt(zone, after);
  // Around a clock change that goes back, instants after `after` can carry walls earlier than wall(after):
  // start the walk as far back as the offsets near `after` differ.
  const nearby = [offsetAt(zone, after - DAY - 2 * HOUR), current, offsetAt(zone, after + DAY + 2 * HOUR)];
  const rewind = Math.max(...nearby) - Math.min(...nearby);
  let from = Math.floor((after + current - rewind) / MINUTE) * MINUTE;
  const limit = Date.UTC(new Date(after).getUTCFullYear() + HORIZON_YEARS, 0, 1);
  let best: number | null = null;
  for (let guard = 0; guard < 100_000; guard++) {
    const wall = nextMatchingWall(cron, from, limit);
    if (wall === null) return best;
    from = wall + MINUTE;
    const resolved = resolveWall(zone, wall);
    if (resolved.kind === "normal") {
      const instant = resolved.instant;
      if (best !== null && instant >= best) return best;
      if (instant > after) return instant;
      continue;
    }
    if (resolved.kind === "gap") {
      // Moved forward by the jump, it can land after real wall times that follow the gap (a 30-minute jump
      // moves 02:28 to 02:58, past 02:35): keep it until a wall after the gap proves nothing comes earlier.
      if (resolved.instant > after && (best === null || resolved.instant < best)) best = resolved.instant;
      continue;
    }
    if (resolved.first > after) {
      return best === null || resolved.first < best ? resolved.first : best;
    }
    if (cron.everyHour && resolved.second > after && (best === null || resolved.second < best)) {
      best = resolved.second;
    }
  }
  return best;
}

/** Interval schedules count from the Unix epoch in UTC, so every replica agrees on the ticks without talking. */
export function nextIntervalTick(everyMs: number, after: number): number {
  return (Math.floor(after / everyMs) + 1) * everyMs;
}

/** croner's matcher for each expression, built on first use: it reads the five fields in UTC, so no DST. */
const matchers = new WeakMap<CronExpression, Cron>();

function matcher(cron: CronExpression): Cron {
  let found = matchers.get(cron);
  if (!found) {
    // A fixed UTC offset keeps croner away from Intl; Vixie's day rule becomes croner's AND/OR switch.
    found = new Cron(cron.fields, { mode: "5-part", utcOffset: 0, domAndDow: !cron.daysOred });
    matchers.set(cron, found);
  }
  return found;
}

/**
 * The smallest wall time (UTC-encoded ms) at or after `from` that matches the five fields, or null when none
 * comes before `limit`. croner finds it.
 */
export function nextMatchingWall(cron: CronExpression, from: number, limit: number): number | null {
  const start = Math.ceil(from / MINUTE) * MINUTE;
  // croner answers with the first match strictly after the time it is given, to the second.
  const next = matcher(cron).nextRun(new Date(start - 1000));
  if (next === null || next.getTime() >= limit) return null;
  return next.getTime();
}
