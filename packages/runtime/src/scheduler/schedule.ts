import type { TaskRegistry } from "../core/registry.js";
import type { ScheduleOptions } from "../core/task.js";
import { ScheduleError } from "./schedule-error.js";
import { createTrigger, type Trigger } from "./trigger.js";

/** A validated schedule: ticks are claimed under `name`, each becomes a job of `task`. */
export interface Schedule {
  /** The claim key, and the seed of every tick's job id. A contract: renaming makes the schedule new. */
  readonly name: string;
  readonly task: string;
  readonly trigger: Trigger;
  readonly payload: Record<string, unknown>;
  readonly catchUp: boolean;
}

const SCHEDULE_NAME = /^[A-Za-z0-9_.:\-]+$/;

export function createSchedule(task: string, options: ScheduleOptions): Schedule {
  const name = options.name ?? task;
  const label = name === task ? `schedule of task "${task}"` : `schedule "${name}" (task "${task}")`;
  if (typeof name !== "string" || !SCHEDULE_NAME.test(name) || name.length > 200) {
    throw new ScheduleError(`${label}: name ${JSON.stringify(name)} must be letters, digits and . _ - :`, {
      hint: 'name it like a task, e.g. "report-weekly"',
    });
  }
  const payload = options.payload ?? {};
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new ScheduleError(`${label}: payload must be a plain object; scheduled_for is added to it`);
  }
  if (options.catchUp !== undefined && typeof options.catchUp !== "boolean") {
    throw new ScheduleError(`${label}: catchUp must be true or false`);
  }
  return {
    name,
    task,
    trigger: createTrigger({ cron: options.cron, every: options.every, timezone: options.timezone, label }),
    payload: { ...payload },
    catchUp: options.catchUp ?? true,
  };
}

/**
 * Every schedule the app declares: tasks with `cron` or `every` in their options (named after the task),
 * plus `tasks.schedule(...)`. Names must be unique, because ticks are claimed by name.
 */
export function collectSchedules(registry: TaskRegistry, params: { requireTasks: boolean }): Schedule[] {
  const schedules: Schedule[] = [];
  for (const definition of registry.all()) {
    const { cron, every, timezone, catchUp, payload } = definition.options;
    if (cron === undefined && every === undefined) {
      if (timezone !== undefined || catchUp !== undefined || payload !== undefined) {
        throw new ScheduleError(`task "${definition.name}": timezone, catchUp and payload belong to a schedule, but it has no cron or every`, {
          hint: 'add cron: "..." or every: { ... }, or remove them',
        });
      }
      continue;
    }
    schedules.push(createSchedule(definition.name, { cron, every, timezone, catchUp, payload }));
  }
  for (const declaration of registry.schedules()) {
    const schedule = createSchedule(declaration.task, declaration.options);
    if (params.requireTasks && !registry.get(schedule.task)) {
      throw new ScheduleError(`schedule "${schedule.name}" runs task "${schedule.task}", which no module declares`, {
        code: "SCHEDULE_TASK_UNKNOWN",
        hint: `declare task("${schedule.task}", ...) in its module's tasks.ts, or fix the name`,
      });
    }
    schedules.push(schedule);
  }
  const seen = new Set<string>();
  for (const schedule of schedules) {
    if (seen.has(schedule.name)) {
      throw new ScheduleError(`two schedules are named "${schedule.name}"`, {
        code: "SCHEDULE_DUPLICATE",
        hint: `ticks are claimed by schedule name: give the second one its own, e.g. tasks.schedule("${schedule.task}", { ..., name: "${schedule.name}-2" })`,
      });
    }
    seen.add(schedule.name);
  }
  return schedules;
}
