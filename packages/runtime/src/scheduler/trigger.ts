import type { IntervalSpec } from "../core/task.js";
import { parseCron, type CronExpression } from "./cron-parse.js";
import { nextCronTick, nextIntervalTick } from "./next-tick.js";
import { ScheduleError } from "./schedule-error.js";
import { resolveTimeZone } from "./zone.js";

/** When a schedule fires: a cron expression read in a zone, or a fixed interval counted from the Unix epoch. */
export type Trigger =
  | { readonly kind: "cron"; readonly cron: CronExpression; readonly timezone: string }
  | { readonly kind: "every"; readonly everyMs: number };

const UNIT_MS = { days: 86_400_000, hours: 3_600_000, minutes: 60_000, seconds: 1000, milliseconds: 1 } as const;
/** Below one second a schedule would mostly exercise the claim store; use a worker loop instead. */
const MIN_INTERVAL_MS = 1000;

export function createTrigger(params: { cron?: string | undefined; every?: IntervalSpec | undefined; timezone?: string | undefined; label: string }): Trigger {
  const { cron, every, timezone, label } = params;
  if (cron !== undefined && every !== undefined) {
    throw new ScheduleError(`${label}: give either cron or every, not both`, { hint: "keep the one that says when it should run" });
  }
  if (cron !== undefined) {
    return { kind: "cron", cron: parseCron(cron), timezone: resolveTimeZone(timezone) };
  }
  if (every === undefined) {
    throw new ScheduleError(`${label}: needs cron or every`, {
      hint: 'add cron: "0 3 * * *" (with an optional timezone) or every: { minutes: 5 }',
    });
  }
  if (timezone !== undefined && timezone !== "UTC") {
    throw new ScheduleError(`${label}: every counts from the Unix epoch in UTC, so a timezone does not apply`, {
      hint: 'for "every day at 03:00 local time" use cron: "0 3 * * *" with the timezone',
    });
  }
  return { kind: "every", everyMs: intervalMs(every, label) };
}

export function intervalMs(every: IntervalSpec, label: string): number {
  if (typeof every !== "object" || every === null) {
    throw new ScheduleError(`${label}: every must be an object such as { minutes: 5 }`);
  }
  let total = 0;
  for (const [unit, amount] of Object.entries(every)) {
    const factor = UNIT_MS[unit as keyof typeof UNIT_MS];
    if (factor === undefined) {
      throw new ScheduleError(`${label}: every has unknown unit "${unit}"`, { hint: `use ${Object.keys(UNIT_MS).join(", ")}` });
    }
    if (typeof amount !== "number" || !Number.isFinite(amount) || amount < 0) {
      throw new ScheduleError(`${label}: every.${unit} must be a number of at least 0`);
    }
    total += amount * factor;
  }
  total = Math.round(total);
  if (total < MIN_INTERVAL_MS) {
    throw new ScheduleError(`${label}: every must add up to at least one second`, { hint: "e.g. every: { seconds: 30 }" });
  }
  return total;
}

/** The first tick strictly after `after`, or null when the expression has no more ticks within the horizon. */
export function nextTick(trigger: Trigger, after: number): number | null {
  return trigger.kind === "every" ? nextIntervalTick(trigger.everyMs, after) : nextCronTick(trigger.cron, trigger.timezone, after);
}

/**
 * The latest tick at or before `at`. Cron has no cheap backwards walk across zone changes, so it uses the
 * forward one: look back one hour, then two, four... until a tick falls in the window, then bisect for the
 * last `x` whose next tick is still at or before `at` (next tick is monotone in `x`). About 40 steps whatever
 * the expression, where walking tick by tick could take thousands.
 */
export function previousTick(trigger: Trigger, at: number): number | null {
  if (trigger.kind === "every") return Math.floor(at / trigger.everyMs) * trigger.everyMs;
  for (let span = 3_600_000; span <= 60 * 366 * 86_400_000; span *= 2) {
    const first = nextTick(trigger, at - span);
    if (first === null || first > at) continue;
    // Invariant: nextTick(lo) <= at < nextTick(hi).
    let lo = first - 1;
    let hi = at;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const tick = nextTick(trigger, mid);
      if (tick !== null && tick <= at) lo = mid;
      else hi = mid;
    }
    return nextTick(trigger, lo);
  }
  return null;
}

/** `count` ticks after `after`, as `jfast schedule next` prints them. */
export function upcomingTicks(trigger: Trigger, after: number, count: number): number[] {
  const ticks: number[] = [];
  let cursor = after;
  while (ticks.length < count) {
    const tick = nextTick(trigger, cursor);
    if (tick === null) break;
    ticks.push(tick);
    cursor = tick;
  }
  return ticks;
}

export function describeTrigger(trigger: Trigger): { cron?: string; timezone?: string; everyMs?: number } {
  return trigger.kind === "cron" ? { cron: trigger.cron.source, timezone: trigger.timezone } : { everyMs: trigger.everyMs };
}

/**
 * The next `count` ticks of a cron expression after `after` (default now), in `timezone` (default UTC).
 * What `jfast schedule next` prints; the same parser and tick computation the scheduler runs.
 * Throws ScheduleError (code CRON_INVALID or TIMEZONE_INVALID) with the parser's message.
 */
export function nextCronTicks(params: { cron: string; timezone?: string; after?: Date | number; count?: number }): Date[] {
  const trigger = createTrigger({ cron: params.cron, timezone: params.timezone, label: "schedule" });
  const after = params.after === undefined ? Date.now() : new Date(params.after).getTime();
  if (!Number.isFinite(after)) throw new ScheduleError("after is not a valid time", { hint: "give an ISO-8601 time such as 2025-03-09T00:00:00Z" });
  return upcomingTicks(trigger, after, params.count ?? 5).map((tick) => new Date(tick));
}
