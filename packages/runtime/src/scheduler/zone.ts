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

// Offsets only change at transitions, which fall on whole minutes; caching by minute keeps Intl off the hot path.
const offsetCache = new Map<string, number>();
const OFFSET_CACHE_MAX = 50_000;

/** The zone's offset from UTC in milliseconds at `instant` (wall = instant + offset). */
export function offsetAt(zone: string, instant: number): number {
  if (zone === "UTC") return 0;
  const minute = Math.floor(instant / 60_000);
  const key = `${zone}|${minute}`;
  const cached = offsetCache.get(key);
  if (cached !== undefined) return cached;
  const at = minute * 60_000;
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
  const offset = wall.getTime() - at;
  if (offsetCache.size >= OFFSET_CACHE_MAX) offsetCache.clear();
  offsetCache.set(key, offset);
  return offset;
}

export function wallAt(zone: string, instant: number): number {
  return instant + offsetAt(zone, instant);
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
