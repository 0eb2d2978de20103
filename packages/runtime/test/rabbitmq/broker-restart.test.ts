import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import { createRabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { startPrivateBroker, type PrivateBroker } from "./private-broker.js";
import { startWorker, uniqueQueue } from "./rabbitmq-test-env.js";

/**
 * Stops and starts a broker in the middle of a run. On a private node, so the suites sharing the broker on
 * 5672 are not disturbed; the node is the same RabbitMQ installation.
 */
describe("rabbitmq: broker restart", () => {
  let broker: PrivateBroker | null = null;

  beforeAll(async () => {
    broker = await startPrivateBroker();
  }, 420_000);

  afterAll(async () => {
    await broker?.shutdown();
  }, 60_000);

  // Jobs run twice after a restart are at most the messages the broker held unacked for the worker: its slots
  // plus what it had pushed ahead (the channel's prefetch, docs/rabbitmq.md#restarts).
  it.each([
    { prefetch: 0, bound: 4, pushed: "nothing pushed ahead" },
    { prefetch: 6, bound: 10, pushed: "6 pushed ahead" },
  ])("reconnects after stop_app / start_app and loses no confirmed job, delayed ones included ($pushed)", { timeout: 180_000 }, async ({ prefetch, bound }) => {
    const queue = uniqueQueue("restart");
    const backend = createRabbitMqBackend({ url: broker!.url, queue, connectTimeoutMs: 60_000, heartbeatSeconds: 5 });
    await backend.setup();
    const runs = new Map<string, number>();
    const work = defineTask("restart.work", async (_p, { job }) => {
      await new Promise((resolve) => setTimeout(resolve, 40));
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
    });
    const make = (i: number, delayMs = 0) => new Job({ task: "restart.work", payload: { i }, maxAttempts: 5, delayMs, tenantId: null });
    const before = Array.from({ length: 60 }, (_, i) => make(i));
    // Due after the restart: it waits in the cascade while the broker is down.
    const delayed = make(100, 6000);
    await backend.enqueue({ jobs: [...before, delayed] });
    const worker = startWorker(backend, [work], { concurrency: 4, prefetch });
    let during: Promise<unknown> = Promise.resolve();
    let after: Job[] = [];
    try {
      await eventually("some jobs done before the restart", () => runs.size >= 8, 30_000);
      expect(runs.size).toBeLessThan(before.length);
      await broker!.stopApp();
      // Enqueued while the broker is down: it waits for the broker instead of failing.
      after = Array.from({ length: 10 }, (_, i) => make(200 + i));
      during = backend.enqueue({ jobs: after });
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      await broker!.startApp();
    }
    expect((await during) as { inserted: string[] }).toEqual({ inserted: after.map((j) => j.id) });

    const everything = [...before, delayed, ...after];
    await eventually("every job done at least once", () => everything.every((j) => runs.has(j.id)), 90_000);
    expect(await backend.listDead({ limit: 10 })).toEqual([]);
    await eventually("an empty queue", async () => {
      const d = await backend.depths();
      return d.ready + d.scheduled + d.running + d.dead === 0;
    });
    // At-least-once: only jobs whose ack the broker had not taken when it went away may have run twice.
    const twice = [...runs.values()].filter((n) => n > 1).length;
    expect(twice).toBeLessThanOrEqual(bound);
    await worker.stop({ graceMs: 1000 });
    await backend.close();
  });
});

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
