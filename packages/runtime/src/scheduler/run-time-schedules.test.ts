import { describe, expect, it } from "vitest";
import type { Job } from "../core/job.js";
import { TaskRegistry } from "../core/registry.js";
import { task } from "../core/define-task.js";
import { createLogger } from "../observability/logger.js";
import { createSchedule } from "./schedule.js";
import { createScheduleControl } from "./schedule-control.js";
import { Scheduler, type SchedulerClock } from "./scheduler.js";
import { createMemoryScheduleStore } from "./stores/memory-store.js";

class FakeClock implements SchedulerClock {
  private sleepers: { at: number; resolve: () => void }[] = [];
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    this.t = ms;
    const due = this.sleepers.filter((s) => s.at <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.at > this.t);
    for (const s of due) s.resolve();
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (ms <= 0 || signal.aborted) return resolve();
      this.sleepers.push({ at: this.t + ms, resolve });
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
  get sleeping(): number {
    return this.sleepers.length;
  }
}

const logger = createLogger({ service: "test", level: "silent" });
const registry = new TaskRegistry();
/** The control an admin call gets: the running scheduler's. */
const controlOf = (scheduler: Scheduler, enqueue: (jobs: Job[]) => Promise<unknown>) =>
  createScheduleControl({ store: scheduler.store, declared: scheduler.declaredSchedules, registry, enqueue, now: () => scheduler.storeNow(), changed: () => scheduler.changed() });
registry.register(task("report.send", async () => undefined));

function setup(start: number, options: { declared?: ReturnType<typeof createSchedule>[]; pollMs?: number } = {}) {
  const clock = new FakeClock(start);
  const jobs: Job[] = [];
  const enqueue = async (batch: Job[]) => void jobs.push(...batch);
  const store = createMemoryScheduleStore({ enqueue, now: () => clock.now() });
  const scheduler = new Scheduler({ schedules: options.declared ?? [], store, logger, clock, maxSleepMs: 366 * 86_400_000, ...(options.pollMs ? { pollMs: options.pollMs } : {}) });
  const control = controlOf(scheduler, enqueue);
  const ticks = () => jobs.map((j) => (j.payload as { scheduled_for: string }).scheduled_for);
  return { clock, jobs, store, scheduler, control, ticks };
}

/** Runs passes from pass to pass (each at the time the last one asked to wake) until `until`. */
async function drive(runs: { clock: FakeClock; scheduler: Scheduler }[], until: number): Promise<void> {
  for (;;) {
    const wakes = await Promise.all(runs.map((r) => r.scheduler.runPass()));
    const next = Math.min(...wakes);
    if (next > until) return;
    for (const r of runs) r.clock.set(next);
  }
}

const ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago", "Pacific/Chatham"];
const EXPRESSIONS = ["30 2 * * *", "0 * * * *", "*/20 1-3 * * *", "15 3 1,15 * mon", "0 0 * * sat,sun", "@daily", "0 9 * mar-apr,oct-nov *"];

describe("schedules made at run time", () => {
  it("fire the same ticks as the same schedule declared in code (Vixie OR, names, steps, DST gaps and overlaps, seven zones)", async () => {
    // Spring and autumn clock changes of both hemispheres fall in these windows.
    const windows = [Date.parse("2024-03-08T00:00:00Z"), Date.parse("2024-03-29T00:00:00Z"), Date.parse("2024-04-05T00:00:00Z"), Date.parse("2024-10-04T00:00:00Z"), Date.parse("2024-10-25T00:00:00Z")];
    for (const timezone of ZONES) {
      for (const cron of EXPRESSIONS) {
        for (const from of windows) {
          const until = from + 4 * 86_400_000;
          const declared = setup(from, { declared: [createSchedule("report.send", { cron, timezone, name: "nightly" })] });
          const runtime = setup(from);
          await runtime.control.create({ name: "nightly", spec: { task: "report.send", cron, timezone }, actor: "ops" });
          // A run-time schedule starts after it was made, a declared one after the process started: both now.
          await drive([declared, runtime], until);
          expect(runtime.ticks(), `${cron} in ${timezone} from ${new Date(from).toISOString()}`).toEqual(declared.ticks());
        }
      }
    }
    // The comparison means something: the windows do hold ticks.
    const sample = setup(windows[0]!);
    await sample.control.create({ name: "n", spec: { task: "report.send", cron: "30 2 * * *", timezone: "America/New_York" }, actor: null });
    await drive([sample], windows[0]! + 4 * 86_400_000);
    // 2024-03-10 02:30 does not exist in New York: it fires at 03:30 EDT (07:30Z).
    expect(sample.ticks()).toEqual(["2024-03-08T07:30:00.000Z", "2024-03-09T07:30:00.000Z", "2024-03-10T07:30:00.000Z", "2024-03-11T06:30:00.000Z"]);
  });

  it("are refused with the errors of the declared form, and nothing is stored", async () => {
    const { control, store } = setup(Date.parse("2024-06-01T00:00:00Z"));
    const cases: [Record<string, unknown>, string][] = [
      [{ cron: "61 * * * *" }, "CRON_INVALID"],
      [{ cron: "0 0 L * *" }, "CRON_INVALID"],
      [{ cron: "0 0 ? * MON" }, "CRON_INVALID"],
      [{ cron: "0 3 * * *", timezone: "Mars/Olympus" }, "TIMEZONE_INVALID"],
      [{ every: { seconds: 0.5 } }, "SCHEDULE_INVALID"],
      [{}, "SCHEDULE_INVALID"],
    ];
    for (const [options, code] of cases) {
      const declared = (() => {
        try {
          createSchedule("report.send", { ...options, name: "bad" });
        } catch (error) {
          return error as Error & { code: string };
        }
        throw new Error("the declared form accepted it");
      })();
      expect(declared.code).toBe(code);
      await expect(control.create({ name: "bad", spec: { task: "report.send", ...options }, actor: null })).rejects.toMatchObject({ code, message: declared.message });
    }
    await expect(control.create({ name: "bad", spec: { task: "report.nope", cron: "0 * * * *" }, actor: null })).rejects.toMatchObject({ code: "SCHEDULE_TASK_UNKNOWN" });
    expect(await store.schedules()).toEqual([]);
  });

  it("pause skips the ticks until resumed, and resuming does not fire the ones missed meanwhile", async () => {
    const start = Date.parse("2024-06-01T09:30:00Z");
    const run = setup(start);
    await run.control.create({ name: "hourly", spec: { task: "report.send", cron: "0 * * * *" }, actor: "ana" });
    await drive([run], Date.parse("2024-06-01T11:10:00Z"));
    expect(run.ticks()).toEqual(["2024-06-01T10:00:00.000Z", "2024-06-01T11:00:00.000Z"]);
    await run.control.pause({ name: "hourly", actor: "ana" });
    await drive([run], Date.parse("2024-06-01T14:30:00Z"));
    expect(run.ticks()).toHaveLength(2);
    expect(run.scheduler.status().schedules[0]).toMatchObject({ name: "hourly", origin: "runtime", paused: true, updatedBy: "ana" });
    await run.control.resume({ name: "hourly", actor: "ana" });
    await drive([run], Date.parse("2024-06-01T15:10:00Z"));
    expect(run.ticks()).toEqual(["2024-06-01T10:00:00.000Z", "2024-06-01T11:00:00.000Z", "2024-06-01T15:00:00.000Z"]);
  });

  it("an edit starts with the new expression's next tick; a delete stops it", async () => {
    const run = setup(Date.parse("2024-06-01T09:30:00Z"));
    await run.control.create({ name: "s", spec: { task: "report.send", cron: "0 * * * *", payload: { a: 1 } }, actor: null });
    await drive([run], Date.parse("2024-06-01T10:10:00Z"));
    const { before, after } = await run.control.update({ name: "s", patch: { every: { minutes: 15 }, payload: { a: 2 } }, actor: null });
    expect(before).toEqual({ task: "report.send", cron: "0 * * * *", payload: { a: 1 }, catchUp: true });
    expect(after).toEqual({ task: "report.send", every: { minutes: 15 }, payload: { a: 2 }, catchUp: true });
    await drive([run], Date.parse("2024-06-01T10:40:00Z"));
    expect(run.jobs.map((j) => j.payload)).toEqual([
      { a: 1, scheduled_for: "2024-06-01T10:00:00.000Z" },
      { a: 2, scheduled_for: "2024-06-01T10:15:00.000Z" },
      { a: 2, scheduled_for: "2024-06-01T10:30:00.000Z" },
    ]);
    await run.control.delete({ name: "s" });
    await drive([run], Date.parse("2024-06-01T12:00:00Z"));
    expect(run.jobs).toHaveLength(3);
    expect(run.scheduler.status().schedules).toEqual([]);
  });

  it("a declared schedule can be paused, resumed and triggered, not edited or deleted", async () => {
    const run = setup(Date.parse("2024-06-01T09:30:00Z"), { declared: [createSchedule("report.send", { cron: "0 * * * *", payload: { k: "v" } })] });
    await expect(run.control.update({ name: "report.send", patch: { cron: "5 * * * *" }, actor: null })).rejects.toMatchObject({ code: "SCHEDULE_DECLARED" });
    await expect(run.control.delete({ name: "report.send" })).rejects.toMatchObject({ code: "SCHEDULE_DECLARED" });
    await expect(run.control.create({ name: "report.send", spec: { task: "report.send", cron: "5 * * * *" }, actor: null })).rejects.toMatchObject({ code: "SCHEDULE_DUPLICATE" });
    await expect(run.control.pause({ name: "nope", actor: null })).rejects.toMatchObject({ code: "SCHEDULE_NOT_FOUND" });
    expect(await run.control.pause({ name: "report.send", actor: "ana" })).toEqual({ origin: "code", changed: true });
    await drive([run], Date.parse("2024-06-01T11:30:00Z"));
    expect(run.jobs).toHaveLength(0);
    run.clock.set(Date.parse("2024-06-01T11:30:00Z"));
    const { jobId } = await run.control.trigger({ name: "report.send" });
    expect(run.jobs.map((j) => [j.id, j.task, j.payload])).toEqual([[jobId, "report.send", { k: "v", scheduled_for: "2024-06-01T11:30:00.000Z" }]]);
    await run.control.resume({ name: "report.send", actor: "ana" });
    await drive([run], Date.parse("2024-06-01T12:30:00Z"));
    expect(run.ticks()).toEqual(["2024-06-01T11:30:00.000Z", "2024-06-01T12:00:00.000Z"]);
  });

  it("a sleeping scheduler sees a schedule stored by another process at its next poll, without a restart", async () => {
    const start = Date.parse("2024-06-01T09:30:00Z");
    const a = setup(start, { declared: [createSchedule("report.send", { cron: "0 0 1 1 *", name: "yearly" })], pollMs: 1000 });
    // Another process: its own scheduler over the same store.
    const other = new Scheduler({ schedules: [], store: a.store, logger, clock: a.clock });
    const otherControl = controlOf(other, async () => undefined);
    a.scheduler.start();
    try {
      await waitFor(() => a.clock.sleeping > 0);
      await otherControl.create({ name: "every-5s", spec: { task: "report.send", every: { seconds: 5 } }, actor: null });
      a.clock.set(start + 1000);
      await waitFor(() => a.scheduler.status().schedules.some((s) => s.name === "every-5s"));
      a.clock.set(start + 5000);
      await waitFor(() => a.jobs.length === 1);
      expect(a.ticks()).toEqual(["2024-06-01T09:30:05.000Z"]);
    } finally {
      await a.scheduler.stop();
    }
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(condition()).toBe(true);
}
