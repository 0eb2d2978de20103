import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { WORKER_LOST } from "../../src/core/queue-backend.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { startWorkerProcess, type WorkerProcess } from "./process-harness.js";
import { AMQP_URL, dropQueue, openBackend, uniqueQueue } from "./rabbitmq-test-env.js";

let backend: RabbitMqBackend | null = null;
let queue = "";
const processes: WorkerProcess[] = [];

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.kill()));
  await backend?.close();
  backend = null;
  await dropQueue(queue);
});

describe("rabbitmq: workers that vanish (kill -9)", () => {
  it("dead-letters a job that kills its worker every time, with 'worker lost', after max_attempts", async () => {
    queue = uniqueQueue("poison");
    // The test's own backend only enqueues and reads dead letters; it never consumes.
    backend = await openBackend(queue);
    const pill = new Job({ task: "crash.poison", payload: {}, maxAttempts: 3, tenantId: null });
    await backend.enqueue({ jobs: [pill] });

    const restarts: number[] = [];
    let killedAt = 0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      // A visibility timeout of 60 s: the job must come back because the broker saw the connection die, not
      // because a lease ran out.
      const worker = startWorkerProcess({ url: AMQP_URL, queue, leaseMs: 60_000 });
      processes.push(worker);
      const started = await worker.line((l) => l.started === pill.id);
      if (killedAt > 0) restarts.push(Date.now() - killedAt);
      expect(started.attempt).toBe(attempt);
      await worker.kill();
      killedAt = Date.now();
    }
    for (const ms of restarts) expect(ms).toBeLessThan(30_000);

    // The third loss is recorded by whoever receives the redelivery next; that worker must not run it.
    const last = startWorkerProcess({ url: AMQP_URL, queue, leaseMs: 60_000 });
    processes.push(last);
    await last.line((l) => l.ready === true);
    const dead = await eventually(async () => {
      const list = await backend!.listDead({ limit: 5 });
      return list.length > 0 ? list : null;
    });
    expect(dead).toHaveLength(1);
    expect(dead[0]!.job).toMatchObject({ id: pill.id, attempts: 3 });
    expect(dead[0]!.job.errors.map((e) => [e.attempt, e.reason])).toEqual([
      [1, WORKER_LOST],
      [2, WORKER_LOST],
      [3, WORKER_LOST],
    ]);
    expect(dead[0]!.lastError).toMatchObject({ class: "WorkerLost", reason: WORKER_LOST });
    expect(last.lines.filter((l) => l.started !== undefined)).toEqual([]);
    expect(await backend.depths()).toMatchObject({ ready: 0, scheduled: 0, dead: 1 });
  });
});

async function eventually<T>(check: () => Promise<T | null>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
