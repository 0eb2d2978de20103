import type { SchedulerStatus } from "../scheduler/scheduler.js";
import { createTrigger, upcomingTicks, type Trigger } from "../scheduler/trigger.js";
import type { ScheduleSource, ScheduleView } from "./sources.js";

/** A tick more than this overdue means the scheduler is behind (stopped, or failing to claim). */
const LATE_AFTER_MS = 60_000;

/** Adapts the running scheduler's status to the admin view, with the next ticks worked out by the same rules. */
export function scheduleSourceFrom(scheduler: { status(): SchedulerStatus }): ScheduleSource {
  return {
    async describeSchedules({ count }) {
      const now = Date.now();
      return scheduler.status().schedules.map((s): ScheduleView => {
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
        };
      });
    },
  };
}

function humanMs(ms: number): string {
  for (const [unit, size] of [["day", 86_400_000], ["hour", 3_600_000], ["minute", 60_000], ["second", 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms / size === 1 ? "" : "s"}`;
  }
  return `${ms} ms`;
}
