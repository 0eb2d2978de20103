import { Job } from "../core/job.js";
import type { TaskRegistry } from "../core/registry.js";
import type { IntervalSpec } from "../core/task.js";
import { createSchedule, type Schedule } from "./schedule.js";
import { ScheduleError } from "./schedule-error.js";
import type { EnqueueJobs, ScheduleStore, StoredSchedule, StoredScheduleSpec } from "./stores/schedule-store.js";
import { describeTrigger, upcomingTicks } from "./trigger.js";

/** What a schedule made at run time says; the same options a declared one takes (`tasks.schedule`). */
export interface ScheduleSpecInput {
  task: string;
  cron?: string | undefined;
  every?: IntervalSpec | undefined;
  timezone?: string | undefined;
  payload?: Record<string, unknown> | undefined;
  catchUp?: boolean | undefined;
}

/** An edit: the fields given replace the stored ones; `cron` drops `every` and the other way round. */
export type ScheduleSpecPatch = Partial<ScheduleSpecInput>;

export interface ScheduleControl {
  create(params: { name: string; spec: ScheduleSpecInput; actor: string | null }): Promise<StoredSchedule>;
  update(params: { name: string; patch: ScheduleSpecPatch; actor: string | null }): Promise<{ before: StoredScheduleSpec; after: StoredScheduleSpec }>;
  pause(params: { name: string; actor: string | null }): Promise<{ origin: "code" | "runtime"; changed: boolean }>;
  resume(params: { name: string; actor: string | null }): Promise<{ origin: "code" | "runtime"; changed: boolean }>;
  delete(params: { name: string }): Promise<StoredScheduleSpec>;
  /** Enqueues one job of the schedule now (paused or not), as a tick would: `scheduled_for` is now. */
  trigger(params: { name: string }): Promise<{ jobId: string; task: string }>;
  /** Every schedule, declared and stored, as the store has them (what `jfast schedules list` prints). */
  list(params: { count: number }): Promise<ScheduleListing[]>;
}

export interface ScheduleListing {
  name: string;
  task: string;
  origin: "code" | "runtime";
  paused: boolean;
  cron?: string;
  timezone?: string;
  everyMs?: number;
  payload: Record<string, unknown>;
  catchUp: boolean;
  nextTicks: string[];
  lastTick: string | null;
  updatedBy: string | null;
  updatedAt: string | null;
}

/** What the control works on: the running scheduler's, or one opened for a command (`jfast schedules …`). */
export interface ScheduleControlDeps {
  store: ScheduleStore;
  /** The schedules declared in code. */
  declared: readonly Schedule[];
  registry: TaskRegistry;
  enqueue: EnqueueJobs;
  /** Now by the store's clock. */
  now: () => number;
  /** Called after each stored change: a running scheduler passes at once. */
  changed?: () => void;
}

/**
 * Schedules changed at run time (docs/scheduler.md#at-run-time). Each change is checked as a declaration is
 * (the same errors), stored, and seen by every process on its next read of the store; this process passes at
 * once. A schedule declared in code keeps its definition in code: it can be paused, resumed and triggered.
 */
export function createScheduleControl(deps: ScheduleControlDeps): ScheduleControl {
  const { store, registry, enqueue } = deps;
  const changed = () => deps.changed?.();
  const declaredSchedule = (name: string) => deps.declared.find((s) => s.name === name);

  async function find(name: string): Promise<StoredSchedule | undefined> {
    return (await store.schedules()).find((s) => s.name === name);
  }

  function check(name: string, spec: ScheduleSpecInput): StoredScheduleSpec {
    const schedule = createSchedule(spec.task, { cron: spec.cron, every: spec.every, timezone: spec.timezone, payload: spec.payload, catchUp: spec.catchUp, name });
    if (!registry.get(schedule.task)) {
      throw new ScheduleError(`schedule "${name}" runs task "${schedule.task}", which no module declares`, {
        code: "SCHEDULE_TASK_UNKNOWN",
        hint: `pick one of this service's tasks (jfast tasks), or declare task("${schedule.task}", ...) in its module's tasks.ts`,
      });
    }
    return {
      task: schedule.task,
      ...(spec.cron !== undefined ? { cron: spec.cron } : {}),
      ...(spec.every !== undefined ? { every: spec.every } : {}),
      ...(spec.timezone !== undefined ? { timezone: spec.timezone } : {}),
      payload: schedule.payload,
      catchUp: schedule.catchUp,
    };
  }

  function declaredRefusal(name: string, action: string): ScheduleError {
    return new ScheduleError(`schedule "${name}" is declared in code; it can be paused, resumed and triggered, but ${action} it means changing its tasks file`, {
      code: "SCHEDULE_DECLARED",
      hint: "edit the declaration and deploy, or pause it and create a schedule at run time under another name",
    });
  }

  function notFound(name: string): ScheduleError {
    return new ScheduleError(`no schedule is named "${name}"`, { code: "SCHEDULE_NOT_FOUND", hint: "jfast schedules list shows them" });
  }

  async function setPaused(name: string, paused: boolean, actor: string | null) {
    const now = deps.now();
    const declared = declaredSchedule(name);
    const stored = await find(name);
    if (!declared && !stored?.spec) throw notFound(name);
    const origin = declared ? ("code" as const) : ("runtime" as const);
    if ((stored?.paused ?? false) === paused) return { origin, changed: false };
    const record: StoredSchedule = {
      name,
      spec: declared ? null : stored!.spec,
      paused,
      // Resuming: the ticks that passed while paused stay skipped.
      since: paused ? (stored?.since ?? now) : now,
      updatedAt: now,
      updatedBy: actor,
    };
    await store.saveSchedule({ schedule: record, create: false });
    changed();
    return { origin, changed: true };
  }

  return {
    async create({ name, spec, actor }) {
      const checked = check(name, spec);
      if (declaredSchedule(name)) {
        throw new ScheduleError(`a schedule named "${name}" is declared in code`, { code: "SCHEDULE_DUPLICATE", hint: "ticks are claimed by name: pick another name" });
      }
      const now = deps.now();
      const record: StoredSchedule = { name, spec: checked, paused: false, since: now, updatedAt: now, updatedBy: actor };
      if (!(await store.saveSchedule({ schedule: record, create: true }))) {
        throw new ScheduleError(`a schedule named "${name}" exists`, { code: "SCHEDULE_DUPLICATE", hint: `edit it with jfast schedules update ${name}, or pick another name` });
      }
      changed();
      return record;
    },
    async update({ name, patch, actor }) {
      if (declaredSchedule(name)) throw declaredRefusal(name, "editing");
      const stored = await find(name);
      if (!stored?.spec) throw notFound(name);
      const before = stored.spec;
      const merged: ScheduleSpecInput = { ...before };
      for (const [key, value] of Object.entries(patch)) if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
      if (patch.cron !== undefined) delete merged.every;
      if (patch.every !== undefined) {
        delete merged.cron;
        if (patch.timezone === undefined) delete merged.timezone;
      }
      const after = check(name, merged);
      const now = deps.now();
      await store.saveSchedule({ schedule: { ...stored, spec: after, since: now, updatedAt: now, updatedBy: actor }, create: false });
      changed();
      return { before, after };
    },
    pause: ({ name, actor }) => setPaused(name, true, actor),
    resume: ({ name, actor }) => setPaused(name, false, actor),
    async delete({ name }) {
      if (declaredSchedule(name)) throw declaredRefusal(name, "deleting");
      const stored = await find(name);
      if (!stored?.spec) throw notFound(name);
      await store.deleteSchedule({ name });
      changed();
      return stored.spec;
    },
    async trigger({ name }) {
      const schedule = declaredSchedule(name) ?? (await storedSchedule(name));
      const now = deps.now();
      const job = new Job({
        task: schedule.task,
        payload: { ...schedule.payload, scheduled_for: new Date(now).toISOString() },
        tenantId: null,
        requestId: null,
        trace: null,
      });
      await enqueue([job]);
      return { jobId: job.id, task: job.task };
    },
    list,
  };

  async function list({ count }: { count: number }): Promise<ScheduleListing[]> {
    const stored = await store.schedules();
    const byName = new Map(stored.map((s) => [s.name, s]));
    const now = deps.now();
    const rows: { schedule: Schedule; origin: "code" | "runtime"; record: StoredSchedule | undefined }[] = deps.declared.map((schedule) => ({ schedule, origin: "code", record: byName.get(schedule.name) }));
    for (const record of stored) {
      if (record.spec === null || declaredSchedule(record.name)) continue;
      try {
        const { task, ...options } = record.spec;
        rows.push({ schedule: createSchedule(task, { ...options, name: record.name }), origin: "runtime", record });
      } catch {
        // Listed by the scheduler's log: a stored schedule that no longer parses.
      }
    }
    const last = await store.lastTicks({ names: rows.map((r) => r.schedule.name) });
    return rows.map(({ schedule, origin, record }) => ({
      name: schedule.name,
      task: schedule.task,
      origin,
      paused: record?.paused ?? false,
      ...describeTrigger(schedule.trigger),
      payload: schedule.payload,
      catchUp: schedule.catchUp,
      nextTicks: upcomingTicks(schedule.trigger, now, count).map((t) => new Date(t).toISOString()),
      lastTick: last.has(schedule.name) ? new Date(last.get(schedule.name)!).toISOString() : null,
      updatedBy: record?.updatedBy ?? null,
      updatedAt: record ? new Date(record.updatedAt).toISOString() : null,
    }));
  }

  async function storedSchedule(name: string) {
    const stored = await find(name);
    if (!stored?.spec) throw notFound(name);
    const { task, ...options } = stored.spec;
    return createSchedule(task, { ...options, name });
  }
}
