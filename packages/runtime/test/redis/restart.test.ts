import { afterEach, describe, expect, it } from "vitest";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep } from "../conformance/harness.js";
import { restartRedis } from "./redis-server.js";
import { dropQueue, openBackend, uniqueQueue } from "./redis-test-env.js";

/**
 * Stops and starts the real redis-server in the middle of a run. Its own file: the outage touches every test
 * using this Redis, so it is kept short (a few hundred milliseconds) and happens once.
 */
describe("redis: server restart", () => {
  let backend: RedisBackend | null = null;
  let worker: Worker | null = null;
  let queue = "";

  afterEach(async () => {
    await worker?.stop({ graceMs: 0 });
    await backend?.close();
    await dropQueue(queue);
  });

  it("reconnects, finishes the queue, loses nothing and runs no completed job again", async () => {
    queue = uniqueQueue("restart");
    backend = await openBackend(queue);
    const runs = new Map<string, number>();
    const task = defineTask("restart.work", async (_payload, { job }) => {
      await sleep(4);
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
    });
    const now = Date.now();
    const immediate = Array.from({ length: 400 }, (_, i) => makeJob({ task: "restart.work", payload: { i } }));
    // Some come due only after the restart: the schedule must survive it too.
    const delayed = Array.from({ length: 40 }, (_, i) => makeJob({ task: "restart.work", availableAt: new Date(now + 2500 + i * 10) }));
    await backend.enqueue({ jobs: [...immediate, ...delayed] });

    worker = new Worker({
      backend,
      lookup: (name) => (name === task.name ? task : undefined),
      execute: (definition, job, cancellation) =>
        Promise.resolve(definition.handler(job.payload, { ctx: { serviceName: "restart", require: <T,>() => undefined as T }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
      logger: createLogger({ service: "restart", level: "silent" }),
      concurrency: 10,
      leaseMs: 30_000,
      backoffBaseMs: 50,
      pollIntervalMs: 1000,
      defaultMaxAttempts: 3,
    });
    worker.start();
    await eventually("the run under way", async () => runs.size >= 100);
    // A process starting while Redis is down waits for it instead of failing start-up.
    let lateStarter: Promise<RedisBackend> | null = null;
    const { outageMs } = await restartRedis({ downMs: 300, whileDown: () => (lateStarter = openBackend(queue)) });
    expect(lateStarter).not.toBeNull();
    const late = await lateStarter!;
    expect((await late.depths()).dead).toBe(0);
    await late.close();
    const doneAtRestart = runs.size;
    expect(doneAtRestart).toBeLessThan(440);

    await eventually("every job run", async () => runs.size === 440, 30_000);
    await eventually("an empty queue", async () => {
      const d = await backend!.depths();
      return d.ready + d.scheduled + d.running === 0;
    });
    // Nothing ran twice: acknowledged completions survived the restart and in-flight outcomes were delivered.
    expect([...runs.entries()].filter(([, n]) => n > 1)).toEqual([]);
    expect((await backend.depths()).dead).toBe(0);
    expect(outageMs).toBeGreaterThanOrEqual(300);
  });
});
