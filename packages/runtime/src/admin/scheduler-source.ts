import type { SchedulerStatus } from "../scheduler/scheduler.js";
import type { ScheduleStore } from "../scheduler/stores/schedule-store.js";
import { createTrigger, nextTick, upcomingTicks, type Trigger } from "../scheduler/trigger.js";
import type { ScheduleControl } from "../scheduler/schedule-control.js";
import type { ScheduleSource, ScheduleView } from "./sources.js";

/** A tick more than this overdue means the scheduler is behind (stopped, or failing to claim). */
const LATE_AFTER_MS = 60_000;
/** Missed ticks are counted over this window. */
const MISSED_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A schedule every second has 86 400 ticks a day; no count walks further than this. */
const MAX_TICKS_COUNTED = 200_000;

/**
 * Adapts the running scheduler's status to the admin view, with the next ticks worked out by the same rules,
 * and the ticks of the last 24 hours nobody claimed counted against the claim store.
 */
export function scheduleSourceFrom(scheduler: { status(): SchedulerStatus; store?: Pick<ScheduleStore, "tickClaims">; control?: ScheduleControl | null }): ScheduleSource {
  return {
    control: scheduler.control ?? null,
    async describeSchedules({ count }) {
      const now = Date.now();
      const views = scheduler.status().schedules.map((s): ScheduleView & { trigger: Trigger | null } => {
        const trigger: Trigger | null = s.cron
          ? createTrigger({ cron: s.cron, timezone: s.timezone, label: s.name })
          : s.everyMs
            ? { kind: "every", everyMs: s.everyMs }
            : null;
        return {
          name: s.name,
          task: s.task,
          expression: s.cron ?? `every ${humanMs(s.everyMs ?? 0)}`,
          kind: s.cron ? "cron" : "every",
          timezone: s.timezone ?? "UTC",
          nextTicks: trigger ? upcomingTicks(trigger, now, count).map((t) => new Date(t).toISOString()) : [],
          lastTickAt: s.lastTick,
          lastError: s.lastError ? `${s.lastError.message} (${s.lastError.at})` : null,
          late: s.nextTick !== null && Date.parse(s.nextTick) < now - LATE_AFTER_MS,
          missedTicks: 0,
          origin: s.origin,
          paused: s.paused,
          payload: s.payload,
          catchUp: s.catchUp,
          ...(s.everyMs ? { everyMs: s.everyMs } : {}),
          updatedBy: s.updatedBy,
          updatedAt: s.updatedAt,
          trigger,
        };
      });
      return Promise.all(
        views.map(async ({ trigger, ...view }) => ({
          ...view,
          missedTicks: trigger && scheduler.store ? await missedTicks(scheduler.store, view.name, trigger, now) : 0,
        })),
      );
    },
  };
}

/**
 * Ticks due in the last 24 hours (and more than a minute ago) that no replica claimed: the scheduler was down,
 * or after downtime it fired only the latest missed tick and skipped the others. A schedule first claimed inside
 * the window is counted from that first claim, so a new schedule has missed nothing.
 */
async function missedTicks(store: Pick<ScheduleStore, "tickClaims">, name: string, trigger: Trigger, now: number): Promise<number> {
  const from = now - MISSED_WINDOW_MS;
  const to = now - LATE_AFTER_MS;
  const claims = await store.tickClaims({ name, from, to });
  const start = claims.before ? from : claims.first;
  if (start === null) return 0;
  let due = 0;
  for (let tick = nextTick(trigger, start - 1); tick !== null && tick <= to && due < MAX_TICKS_COUNTED; tick = nextTick(trigger, tick)) due++;
  return Math.max(0, due - claims.claimed);
}

function humanMs(ms: number): string {
  for (const [unit, size] of [["day", 86_400_000], ["hour", 3_600_000], ["minute", 60_000], ["second", 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms / size === 1 ? "" : "s"}`;
  }
  return `${ms} ms`;
}
