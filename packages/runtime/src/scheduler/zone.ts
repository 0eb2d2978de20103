import { ScheduleError } from "./schedule-error.js";

/**
 * Time-zone arithmetic on top of Intl (the zoneinfo data Node ships with), no library. A "wall" time is a
 * local calendar time encoded as if it were UTC milliseconds, so plain Date.UTC arithmetic walks the calendar.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Validates and canonicalises a zoneinfo name ("america/new_york" → "America/New_York"). */
export function resolveTimeZone(zone: string | undefined): string {
  if (zone === undefined || zone === "UTC") return "UTC";
  if (typeof zone !== "string" || zone.trim() === "") {
    throw new ScheduleError(`time zone ${JSON.stringify(zone)} is empty`, { code: "TIMEZONE_INVALID", hint: zoneHint });
  }
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
  } catch (cause) {
    throw new ScheduleError(`unknown time zone "${zone}"`, { code: "TIMEZONE_INVALID", hint: zoneHint, cause });
  }
}

const zoneHint = 'name a zoneinfo zone such as "America/Mexico_City", "Europe/Berlin" or "UTC"';

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The zone's offset from UTC in milliseconds at `instant`, read from Intl (slow: tens of microseconds). */
function intlOffsetAt(zone: string, instant: number): number {
  const at = Math.floor(instant / 60_000) * 60_000;
  let year = 0, month = 1, day = 1, hour = 0, min = 0, sec = 0;
  for (const part of formatter(zone).formatToParts(at)) {
    switch (part.type) {
      case "year": year = Number(part.value); break;
      case "month": month = Number(part.value); break;
      case "day": day = Number(part.value); break;
      case "hour": hour = Number(part.value); break;
      case "minute": min = Number(part.value); break;
      case "second": sec = Number(part.value); break;
    }
  }
  const wall = new Date(0);
  wall.setUTCFullYear(year, month - 1, day);
  wall.setUTCHours(hour, min, sec, 0);
  return wall.getTime() - at;
}

/**
 * One year of a zone's clock changes, found once: the offset is sampled daily and each change is narrowed
 * to the minute by bisection (about 400 Intl calls a zone-year). A zone changes its clock at most once a
 * day, which holds for every zone in the database, Samoa's skipped day included.
 */
interface YearTable {
  /** Instants (ms, on a minute) at which the offset changes, ascending. */
  at: number[];
  /** offsets[0] is the offset at the start of the year; offsets[i + 1] the one from at[i] on. */
  offsets: number[];
}

const tables = new Map<string, YearTable>();
const DAY_MS = 86_400_000;

function yearTable(zone: string, year: number): YearTable {
  const key = `${zone}|${year}`;
  let table = tables.get(key);
  if (table) return table;
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  table = { at: [], offsets: [intlOffsetAt(zone, start)] };
  let previous = table.offsets[0]!;
  for (let day = start; day < end; day += DAY_MS) {
    const next = intlOffsetAt(zone, Math.min(day + DAY_MS, end - 60_000));
    if (next === previous) continue;
    let lo = day;
    let hi = Math.min(day + DAY_MS, end - 60_000);
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (intlOffsetAt(zone, mid) === previous) lo = mid;
      else hi = mid;
    }
    table.at.push(hi);
    table.offsets.push(next);
    previous = next;
  }
  tables.set(key, table);
  return table;
}

/** The zone's offset from UTC in milliseconds at `instant` (wall = instant + offset). */
export function offsetAt(zone: string, instant: number): number {
  if (zone === "UTC") return 0;
  const table = yearTable(zone, new Date(instant).getUTCFullYear());
  let lo = 0;
  let hi = table.at.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (table.at[mid]! <= instant) lo = mid + 1;
    else hi = mid;
  }
  return table.offsets[lo]!;
}

/** How a wall time maps to instants around a clock change. */
export type WallResolution =
  | { kind: "normal"; instant: number }
  /** The clock jumped over it; `instant` is the wall time moved forward by the jump (02:30 → 03:30). */
  | { kind: "gap"; instant: number }
  /** The clock went back over it: it happened twice. */
  | { kind: "overlap"; first: number; second: number };

const DAY = 86_400_000;

/**
 * Resolves a wall time in `zone`. Offsets a day either side bound the candidates (the approach of
 * Temporal's GetPossibleEpochNanoseconds): each candidate is kept if the zone really has that offset then.
 */
export function resolveWall(zone: string, wall: number): WallResolution {
  if (zone === "UTC") return { kind: "normal", instant: wall };
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  const early = wall - before;
  const late = wall - after;
  const earlyValid = offsetAt(zone, early) === before;
  const lateValid = offsetAt(zone, late) === after;
  if (earlyValid && lateValid && early !== late) {
    return { kind: "overlap", first: Math.min(early, late), second: Math.max(early, late) };
  }
  if (earlyValid) return { kind: "normal", instant: early };
  if (lateValid) return { kind: "normal", instant: late };
  // Two changes within two days can leave both day-apart offsets wrong; ask the zone directly.
  const direct = offsetAt(zone, wall - offsetAt(zone, wall));
  if (offsetAt(zone, wall - direct) === direct && before === after) return { kind: "normal", instant: wall - direct };
  // Skipped by the clock: read it with the offset in force before the jump, which moves it forward by the jump.
  return { kind: "gap", instant: wall - before };
}
