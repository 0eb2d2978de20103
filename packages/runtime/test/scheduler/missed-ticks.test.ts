import { afterEach, describe, expect, it } from "vitest";
import { scheduleSourceFrom } from "../../src/admin/scheduler-source.js";
import { Job } from "../../src/core/job.js";
import type { SchedulerStatus } from "../../src/scheduler/scheduler.js";
import { createMemoryScheduleStore } from "../../src/scheduler/stores/memory-store.js";
import { createPostgresScheduleStore } from "../../src/scheduler/stores/postgres-store.js";
import { createRedisScheduleStore } from "../../src/scheduler/stores/redis-store.js";
import type { ScheduleStore } from "../../src/scheduler/stores/schedule-store.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { dropSchema, openPool, uniqueSchema } from "./pg-env.js";

const HOUR = 3_600_000;

/** Every claim store counts the ticks of the last 24 hours nobody claimed, for the admin's schedules view. */
describe("missed ticks (schedules.list)", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Claims are made "at" their tick, as a running scheduler would. */
  let clock = Date.now();
  const stores: Record<string, () => Promise<ScheduleStore>> = {
    memory: async () => createMemoryScheduleStore({ enqueue: async () => undefined, now: () => clock }),
    postgres: async () => {
      const schema = uniqueSchema("missed");
      const db = await openPool(schema, 2);
      cleanups.push(async () => {
        await db.close();
        await dropSchema(schema);
      });
      return createPostgresScheduleStore({ db, enqueue: async () => undefined });
    },
    redis: async () => {
      const queue = uniqueQueue("missed");
      const store = createRedisScheduleStore({ url: REDIS_URL, queue, enqueue: async () => undefined, now: () => clock });
      cleanups.push(async () => {
        await store.close();
        await dropQueue(queue);
      });
      return store;
    },
  };

  function status(names: string[]): SchedulerStatus {
    return {
      status: "ok",
      running: true,
      store: "memory",
      lastError: null,
      schedules: names.map((name) => ({
        name,
        task: "report.hourly",
        origin: "code" as const,
        paused: false,
        payload: {},
        updatedBy: null,
        updatedAt: null,
        cron: "0 * * * *",
        timezone: "UTC",
        catchUp: true,
        nextTick: null,
        lastTick: null,
        lastError: null,
      })),
    };
  }

  async function claim(store: ScheduleStore, name: string, tick: number): Promise<void> {
    clock = tick + 1000;
    expect(await store.claim({ name, tick, job: new Job({ task: "report.hourly" }) })).toBe(true);
  }

  for (const [kind, open] of Object.entries(stores)) {
    it(`${kind}: counts unclaimed ticks of the last 24 h, and a new schedule from its first claim`, async () => {
      const store = await open();
      const now = Date.now();
      const lastHour = Math.floor(now / HOUR) * HOUR;
      // An old schedule: claimed for 30 hours, except three ticks inside the window (the scheduler was down).
      const skipped = new Set([lastHour - 5 * HOUR, lastHour - 6 * HOUR, lastHour - 12 * HOUR]);
      for (let tick = lastHour - 30 * HOUR; tick <= lastHour - HOUR; tick += HOUR) if (!skipped.has(tick)) await claim(store, "old", tick);
      // A schedule first claimed three hours ago, one tick skipped since.
      await claim(store, "young", lastHour - 3 * HOUR);
      await claim(store, "young", lastHour - HOUR);
      // A schedule never claimed: nothing to compare with, nothing counted.
      clock = Date.now();

      const source = scheduleSourceFrom({ status: () => status(["old", "young", "never"]), store });
      const views = await source.describeSchedules({ count: 1 });
      const missed = Object.fromEntries(views.map((v) => [v.name, v.missedTicks]));
      // The current hour's tick is claimed by nobody either when it is more than a minute old.
      const currentLate = now - lastHour > 60_000 ? 1 : 0;
      expect(missed).toEqual({ old: 3 + currentLate, young: 1 + currentLate, never: 0 });
    });
  }
});
