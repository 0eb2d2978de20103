import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import { createSchedule } from "../../src/scheduler/schedule.js";
import { createRedisScheduleStore, type RedisScheduleStore } from "../../src/scheduler/stores/redis-store.js";
import { tickJob } from "../../src/scheduler/tick-job.js";
import { scheduleKeys } from "../../src/scheduler/stores/redis-keys.js";
import type { RedisClient } from "../../src/backends/redis/connection.js";
import { rawClient, type RedisTarget } from "../redis/redis-test-env.js";
const schedule = createSchedule("report.hourly", { cron: "0 * * * *" });
const HOUR = 3_600_000;
const T = Date.parse("2024-06-01T10:00:00Z");

/** The schedule store against a real Redis or Redis Cluster; a missing server fails the tests, never skips them. */
export function describeScheduleStore(name: string, target: RedisTarget): void {
  describe(name, () => {
    let queue: string;
    let stores: RedisScheduleStore[];
    let raw: RedisClient;
    let jobs: Map<string, Job>;

    beforeEach(() => {
      // The queue name is the hash tag: each test has its own keys.
      queue = `jfast-test.sched.${randomUUID().slice(0, 8)}`;
      stores = [];
      jobs = new Map();
      raw = rawClient(target);
    });

    afterEach(async () => {
      for (const store of stores) await store.close();
      const keys = scheduleKeys({ queue });
      await raw.del(keys.last);
      await raw.del(keys.claims);
      raw.disconnect();
    });

    function open(enqueue?: (jobs: Job[]) => Promise<void>): RedisScheduleStore {
      const store = createRedisScheduleStore({
        url: target.url,
        cluster: target.cluster,
        queue,
        enqueue:
          enqueue ??
          (async (batch) => {
            for (const job of batch) if (!jobs.has(job.id)) jobs.set(job.id, job);
          }),
      });
      stores.push(store);
      return store;
    }

    const claim = (store: RedisScheduleStore, tick: number) => store.claim({ name: schedule.name, tick, job: tickJob(schedule, tick) });

    it("lets one of twenty concurrent claims of a tick from two connections enter", async () => {
      const [a, b] = [open(), open()];
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(i % 2 ? a : b, T)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(jobs.size).toBe(1);
      expect(await b.lastTicks({ names: [schedule.name, "other"] })).toEqual(new Map([[schedule.name, T]]));
      expect(a.keys.last.startsWith(`{${queue}}:`)).toBe(true);
    });

    it("never moves its last tick backwards", async () => {
      const [a, b] = [open(), open()];
      expect(await claim(a, T + HOUR)).toBe(true);
      expect(await claim(b, T)).toBe(false);
      expect(await claim(b, T + HOUR)).toBe(false);
      expect(await raw.hget(a.keys.last, schedule.name)).toBe(String(T + HOUR));
      expect(await claim(b, T + 2 * HOUR)).toBe(true);
      expect(await raw.hget(a.keys.last, schedule.name)).toBe(String(T + 2 * HOUR));
      expect([...jobs.values()].map((j) => (j.payload as { scheduled_for: string }).scheduled_for)).toEqual([
        "2024-06-01T11:00:00.000Z",
        "2024-06-01T12:00:00.000Z",
      ]);
    });

    it("releases a claim whose enqueue failed, so the next pass takes the tick", async () => {
      let fail = false;
      const store = open(async (batch) => {
        if (fail) throw new Error("queue unreachable");
        for (const job of batch) jobs.set(job.id, job);
      });
      expect(await claim(store, T)).toBe(true);
      fail = true;
      await expect(claim(store, T + HOUR)).rejects.toThrow(/queue unreachable/);
      expect(await raw.hget(store.keys.last, schedule.name)).toBe(String(T));
      expect(await raw.zrange(store.keys.claims, "0", "-1")).toEqual([`${T}:${schedule.name}`]);
      fail = false;
      expect(await claim(store, T + HOUR)).toBe(true);
      expect(await raw.hget(store.keys.last, schedule.name)).toBe(String(T + HOUR));
    });

    it("does not undo a later replica's claim when an earlier enqueue fails late", async () => {
      let failNow!: () => void;
      const slow = open(
        () =>
          new Promise<void>((_, reject) => {
            failNow = () => reject(new Error("enqueue timed out"));
          }),
      );
      const fast = open();
      const pending = claim(slow, T);
      await expect.poll(() => raw.hget(slow.keys.last, schedule.name)).toBe(String(T));
      expect(await claim(fast, T + HOUR)).toBe(true);
      failNow();
      await expect(pending).rejects.toThrow(/timed out/);
      expect(await raw.hget(slow.keys.last, schedule.name)).toBe(String(T + HOUR));
    });

    it("prunes old claims and keeps each schedule's last", async () => {
      const store = open();
      for (const hours of [0, 1, 2]) await claim(store, T + hours * HOUR);
      await store.claim({ name: "other", tick: T, job: tickJob({ ...schedule, name: "other" }, T) });
      expect(await store.prune({ before: Date.now() - 60_000 })).toBe(0);
      expect(await store.prune({ before: Date.now() + 60_000 })).toBe(2);
      expect((await raw.zrange(store.keys.claims, "0", "-1")).sort()).toEqual([`${T + 2 * HOUR}:${schedule.name}`, `${T}:other`].sort());
      expect(await store.lastTicks({ names: [schedule.name, "other"] })).toEqual(
        new Map([
          [schedule.name, T + 2 * HOUR],
          ["other", T],
        ]),
      );
    });

    it("reports an unreachable Redis as a BackendError naming the fix", async () => {
      const store = createRedisScheduleStore({ url: "redis://127.0.0.1:1", queue, enqueue: async () => undefined });
      stores.push(store);
      await expect(store.lastTicks({ names: ["x"] })).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE", name: "BackendError" });
    });
  });
}
