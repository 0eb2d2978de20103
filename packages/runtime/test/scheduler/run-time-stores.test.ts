import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import { TaskRegistry } from "../../src/core/registry.js";
import { task } from "../../src/core/define-task.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { createScheduleControl, type ScheduleControl } from "../../src/scheduler/schedule-control.js";
import { Scheduler, type SchedulerClock } from "../../src/scheduler/scheduler.js";
import { createMemoryScheduleStore } from "../../src/scheduler/stores/memory-store.js";
import { createPostgresScheduleStore } from "../../src/scheduler/stores/postgres-store.js";
import { createRedisScheduleStore } from "../../src/scheduler/stores/redis-store.js";
import { scheduleKeys } from "../../src/scheduler/stores/redis-keys.js";
import type { ScheduleStore } from "../../src/scheduler/stores/schedule-store.js";
import { dropSchema, openPool, silent, uniqueSchema } from "./pg-env.js";
import { rawClient, REDIS_URL } from "../redis/redis-test-env.js";

/** One clock for the three processes of a test: each pass is run at a time the test sets. */
class SharedClock implements SchedulerClock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
}

const registry = new TaskRegistry();
/** The control an admin call gets: the running scheduler's. */
const controlOf = (scheduler: Scheduler, enqueue: (jobs: Job[]) => Promise<unknown>) =>
  createScheduleControl({ store: scheduler.store, declared: scheduler.declaredSchedules, registry, enqueue, now: () => scheduler.storeNow(), changed: () => scheduler.changed() });
registry.register(task("report.send", async () => undefined));

interface Processes {
  /** Three stores over one shared place, as three processes would open them. */
  stores: ScheduleStore[];
  /** Every job the stores enqueued, duplicates included (a backend would fold a duplicate id; this does not). */
  enqueued: Job[];
  close(): Promise<void>;
}

const kinds: Record<string, () => Promise<Processes>> = {
  async memory() {
    // The memory store lives in one process: its "processes" are three schedulers sharing it.
    const enqueued: Job[] = [];
    const store = createMemoryScheduleStore({ enqueue: async (jobs) => void enqueued.push(...jobs) });
    return { stores: [store, store, store], enqueued, close: async () => undefined };
  },
  async postgres() {
    const schema = uniqueSchema("runtime");
    const pools = [await openPool(schema), await openPool(schema), await openPool(schema)];
    const backends = pools.map((db) => new PostgresBackend({ db, schema, queue: "jfast.jobs" }));
    for (const backend of backends) await backend.setup();
    const enqueued: Job[] = [];
    const stores = pools.map((db, i) =>
      createPostgresScheduleStore({
        db,
        enqueue: () => Promise.reject(new Error("not used: the claim and the job commit together")),
        enqueueWithin: async (executor, jobs) => {
          enqueued.push(...jobs);
          await backends[i]!.enqueueWithin({ executor, jobs });
        },
      }),
    );
    return {
      stores,
      enqueued,
      async close() {
        for (const backend of backends) await backend.close();
        for (const pool of pools) await pool.close();
        await dropSchema(schema);
      },
    };
  },
  async redis() {
    const queue = `jfast-test.runtime-sched.${randomUUID().slice(0, 8)}`;
    const enqueued: Job[] = [];
    const stores = [0, 1, 2].map(() => createRedisScheduleStore({ url: REDIS_URL, queue, enqueue: async (jobs) => void enqueued.push(...jobs) }));
    return {
      stores,
      enqueued,
      async close() {
        for (const store of stores) await store.close();
        const raw = rawClient();
        const keys = scheduleKeys({ queue });
        await raw.del(keys.last, keys.claims, keys.stored);
        raw.disconnect();
      },
    };
  },
};

for (const [kind, open] of Object.entries(kinds)) {
  describe(`schedules made at run time, ${kind} store`, () => {
    let processes: Processes | null = null;
    afterEach(async () => {
      await processes?.close();
      processes = null;
    });

    async function three(start: number) {
      processes = await open();
      const clock = new SharedClock(start);
      // The test's clock is the reference: the stores' own clocks (serverTime) are left out.
      const schedulers = processes.stores.map((store) => new Scheduler({ schedules: [], store: { ...store, serverTime: undefined }, logger: silent, clock }));
      const controls: ScheduleControl[] = schedulers.map((scheduler) => controlOf(scheduler, async () => undefined));
      /** One pass of every process at `iso`, all at once. */
      const passAt = async (iso: string) => {
        clock.t = Date.parse(iso);
        await Promise.all(schedulers.map((s) => s.runPass()));
      };
      const ticks = () => processes!.enqueued.map((j) => (j.payload as { scheduled_for: string }).scheduled_for).sort();
      return { clock, schedulers, controls, passAt, ticks, store: processes.stores[0]! };
    }

    it("three processes enqueue each tick exactly once, and see a change made by one of them at their next pass", async () => {
      const { controls, schedulers, passAt, ticks } = await three(Date.parse("2024-06-01T09:58:30Z"));
      await passAt("2024-06-01T09:58:30Z");
      // Made through the first process; the other two have never heard of it.
      await controls[0]!.create({ name: "every-minute", spec: { task: "report.send", cron: "* * * * *", payload: { n: 1 } }, actor: "ana" });
      for (const minute of ["09:59", "10:00", "10:01", "10:02"]) {
        await passAt(`2024-06-01T${minute}:00Z`);
        await passAt(`2024-06-01T${minute}:20Z`);
      }
      expect(ticks()).toEqual(["2024-06-01T09:59:00.000Z", "2024-06-01T10:00:00.000Z", "2024-06-01T10:01:00.000Z", "2024-06-01T10:02:00.000Z"]);
      for (const scheduler of schedulers) expect(scheduler.status().schedules.map((s) => [s.name, s.origin, s.paused])).toEqual([["every-minute", "runtime", false]]);

      // Paused through the third: no process fires 10:03 or 10:04.
      await controls[2]!.pause({ name: "every-minute", actor: "ana" });
      await passAt("2024-06-01T10:03:00Z");
      await passAt("2024-06-01T10:04:00Z");
      expect(ticks()).toHaveLength(4);
      // Resumed and edited through the second: the next tick follows the new expression and payload.
      await controls[1]!.resume({ name: "every-minute", actor: "ana" });
      await controls[1]!.update({ name: "every-minute", patch: { cron: "*/2 * * * *", payload: { n: 2 } }, actor: "ana" });
      for (const minute of ["10:05", "10:06", "10:07", "10:08"]) await passAt(`2024-06-01T${minute}:00Z`);
      expect(processes!.enqueued.slice(4).map((j) => j.payload)).toEqual([
        { n: 2, scheduled_for: "2024-06-01T10:06:00.000Z" },
        { n: 2, scheduled_for: "2024-06-01T10:08:00.000Z" },
      ]);
      // Deleted through the first: nobody fires it any more.
      await controls[0]!.delete({ name: "every-minute" });
      await passAt("2024-06-01T10:10:00Z");
      expect(ticks()).toHaveLength(6);
      for (const scheduler of schedulers) expect(scheduler.status().schedules).toEqual([]);
    });

    it("refuses bad input with the declared form's errors and stores nothing", async () => {
      const { controls, store } = await three(Date.parse("2024-06-01T10:00:00Z"));
      const control = controls[0]!;
      await expect(control.create({ name: "bad", spec: { task: "report.send", cron: "0 0 L * *" }, actor: null })).rejects.toMatchObject({ code: "CRON_INVALID" });
      await expect(control.create({ name: "bad", spec: { task: "report.send", cron: "0 3 * * *", timezone: "Nowhere/City" }, actor: null })).rejects.toMatchObject({ code: "TIMEZONE_INVALID" });
      await expect(control.create({ name: "bad", spec: { task: "report.none", cron: "0 3 * * *" }, actor: null })).rejects.toMatchObject({ code: "SCHEDULE_TASK_UNKNOWN" });
      expect(await store.schedules()).toEqual([]);
      await control.create({ name: "good", spec: { task: "report.send", every: { minutes: 5 } }, actor: null });
      await expect(controls[1]!.create({ name: "good", spec: { task: "report.send", every: { minutes: 1 } }, actor: null })).rejects.toMatchObject({ code: "SCHEDULE_DUPLICATE" });
      await expect(control.update({ name: "good", patch: { cron: "* * * * 8" }, actor: null })).rejects.toMatchObject({ code: "CRON_INVALID" });
      expect((await store.schedules()).map((s) => [s.name, s.spec])).toEqual([["good", { task: "report.send", every: { minutes: 5 }, payload: {}, catchUp: true }]]);
    });
  });
}
