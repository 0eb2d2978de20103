import { afterEach, describe, expect, it } from "vitest";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { queueKeys } from "../../src/backends/redis/keys.js";
import { defineTask } from "../../src/core/define-task.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, startTestWorker } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

/**
 * One ready list per priority (keys.ts): idle workers block on the default one, so a job of another priority
 * is announced on the wake channel by the script that makes it ready (lib.lua push_ready).
 */
describe("redis: the ready lists of priorities", () => {
  const opened: RedisBackend[] = [];
  const workers: Worker[] = [];
  let queue = "";

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    for (const backend of opened.splice(0)) await backend.close();
    await dropQueue(queue);
  });

  it("keeps a job of priority 2 on its own list and a default one on the ready list", async () => {
    queue = uniqueQueue("prio-lists");
    const backend = await openBackend(queue);
    opened.push(backend);
    const urgent = makeJob({ priority: 2 });
    const plain = makeJob();
    await backend.enqueue({ jobs: [urgent, plain] });
    const keys = queueKeys({ queue });
    const redis = rawClient();
    try {
      expect(await redis.lrange(keys.readyAt(2), 0, -1)).toEqual([urgent.id]);
      expect(await redis.lrange(keys.ready, 0, -1)).toEqual([plain.id]);
      expect(await redis.hget(keys.job(urgent.id), "priority")).toBe("2");
      expect(await redis.hget(keys.job(plain.id), "priority")).toBeNull();
      expect((await backend.depths()).ready).toBe(2);
    } finally {
      redis.disconnect();
    }
  });

  it("wakes an idle worker of another process for a job of another priority, long before its poll interval", async () => {
    queue = uniqueQueue("prio-wake");
    const workerSide = await openBackend(queue);
    const enqueueSide = await openBackend(queue);
    opened.push(workerSide, enqueueSide);
    const ran: number[] = [];
    const t = defineTask("conf.noop", async () => {
      ran.push(Date.now());
    });
    workers.push(startTestWorker({ backend: workerSide, tasks: [t], concurrency: 1, pollIntervalMs: 30_000 }));
    // Let the worker find nothing and block on the ready list.
    await new Promise((r) => setTimeout(r, 500));
    const start = Date.now();
    await enqueueSide.enqueue({ jobs: [makeJob({ priority: 0 })] });
    await eventually("the urgent job to run", async () => ran.length === 1, 10_000);
    expect(ran[0]! - start).toBeLessThan(5_000);
  });
});
