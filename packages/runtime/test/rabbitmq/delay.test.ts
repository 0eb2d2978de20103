import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import type { Worker } from "../../src/worker/worker.js";
import { collectArrivals, dropQueue, openBackend, startWorker, uniqueQueue, withRawChannel } from "./rabbitmq-test-env.js";

const open: Array<{ backend: RabbitMqBackend; queue: string; levels: number }> = [];
const workers: Worker[] = [];

async function backendFor(label: string, delay?: { levels: number; unitMs: number }): Promise<RabbitMqBackend> {
  const queue = delay ? `${uniqueQueue(label)}-${delay.levels}x${delay.unitMs}ms` : uniqueQueue(label);
  const backend = await openBackend(queue, delay ? { delay } : {});
  open.push({ backend, queue, levels: delay?.levels ?? 25 });
  return backend;
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
  for (const { backend, queue, levels } of open.splice(0)) {
    await backend.close();
    await dropQueue(queue, levels);
  }
});

function job(delayMs: number, payload: Record<string, unknown> = {}, task = "delay.probe"): Job {
  return new Job({ task, payload, delayMs, maxAttempts: 3, tenantId: null, requestId: null, trace: null });
}

describe("rabbitmq: delays held in the broker", () => {
  it("never hands out a 1.5 s delay early, and hands it out soon after it falls due", async () => {
    const backend = await backendFor("delay-1500");
    const delayed = job(1500);
    await backend.enqueue({ jobs: [delayed] });
    expect(await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 })).toEqual([]);
    expect(await backend.depths()).toMatchObject({ ready: 0, scheduled: 1 });
    const [arrival] = await collectArrivals(backend, 1, 10_000);
    expect(arrival!.job.id).toBe(delayed.id);
    expect(arrival!.at).toBeGreaterThanOrEqual(delayed.availableAt.getTime());
    // Generous: proves it was released by the cascade, not found by a slow poll.
    expect(arrival!.at - delayed.availableAt.getTime()).toBeLessThan(1000);
  });

  it("does not let a long delay published first hold back a short one", async () => {
    const backend = await backendFor("no-head-of-line");
    const long = job(3100, { which: "long" });
    const short = job(300, { which: "short" });
    await backend.enqueue({ jobs: [long] });
    await backend.enqueue({ jobs: [short] });
    const arrivals = await collectArrivals(backend, 2, 10_000);
    expect(arrivals.map((a) => (a.job.payload as { which: string }).which)).toEqual(["short", "long"]);
    expect(arrivals[0]!.at).toBeGreaterThanOrEqual(short.availableAt.getTime());
    expect(arrivals[0]!.at).toBeLessThan(long.availableAt.getTime() - 1500);
    expect(arrivals[1]!.at).toBeGreaterThanOrEqual(long.availableAt.getTime());
  });

  it("hands delayed jobs out in the order they fall due, not the order they were published", async () => {
    const backend = await backendFor("due-order");
    const delays = [2400, 600, 1800, 300, 1200, 3000];
    // Due times from one instant, so the time each publish takes does not reorder them.
    const base = Date.now() + 200;
    for (const delayMs of delays) {
      await backend.enqueue({ jobs: [new Job({ task: "delay.probe", payload: { delayMs }, availableAt: new Date(base + delayMs), tenantId: null })] });
    }
    const arrivals = await collectArrivals(backend, delays.length, 15_000);
    expect(arrivals.map((a) => (a.job.payload as { delayMs: number }).delayMs)).toEqual([...delays].sort((a, b) => a - b));
    for (const a of arrivals) expect(a.at).toBeGreaterThanOrEqual(a.job.availableAt.getTime());
  });

  it("sends a delay longer than the whole cascade round again until it is due (4 levels of 100 ms hold 1.5 s)", async () => {
    const backend = await backendFor("rides-again", { levels: 4, unitMs: 100 });
    const far = job(4000);
    await backend.enqueue({ jobs: [far] });
    // At 2 s it has been round the full cascade once, came back early, and is in the cascade again.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 })).toEqual([]);
    expect(await backend.depths()).toMatchObject({ ready: 0, scheduled: 1 });
    const [arrival] = await collectArrivals(backend, 1, 10_000);
    expect(arrival!.job.id).toBe(far.id);
    expect(arrival!.at).toBeGreaterThanOrEqual(far.availableAt.getTime());
    expect(arrival!.at - far.availableAt.getTime()).toBeLessThan(1500);
    // Riding again spent no attempt.
    expect(arrival!.job.attempts).toBe(1);
    expect(arrival!.job.errors).toEqual([]);
  });

  it("waits each retry's backoff in the broker, then dead-letters to <queue>.dead with the history in headers", async () => {
    const backend = await backendFor("retry-backoff");
    const starts: number[] = [];
    const failing = defineTask("delay.declines", async () => {
      starts.push(Date.now());
      throw new Error("card declined");
    });
    const doomed = new Job({ task: "delay.declines", payload: {}, maxAttempts: 3, tenantId: null, requestId: null, trace: null });
    await backend.enqueue({ jobs: [doomed] });
    workers.push(startWorker(backend, [failing], { backoffBaseMs: 800 }));

    await waitUntil("the first failure", () => starts.length === 1);
    // Backing off: the job sits in the cascade, not in the worker and not in the work queue.
    await waitUntil("the retry in the cascade", async () => (await backend.depths()).scheduled === 1);
    expect(await backend.depths()).toMatchObject({ ready: 0, running: 0, scheduled: 1 });

    const dead = await waitUntil("the dead letter", async () => {
      const list = await backend.listDead({ limit: 5 });
      return list.length > 0 ? list : null;
    });
    // Backoff is 800 ms then 1600 ms, ±10% jitter.
    expect(starts).toHaveLength(3);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(720);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(1440);
    expect(dead[0]!.job).toMatchObject({ id: doomed.id, attempts: 3 });
    expect(dead[0]!.job.errors.map((e) => e.attempt)).toEqual([1, 2, 3]);

    // What an operator sees in the broker: the message in <queue>.dead with jfast's headers.
    const headers = await withRawChannel(async (channel) => {
      const message = await channel.get(`${backend.names.dead}`, { noAck: false });
      if (!message) throw new Error("nothing in the dead queue");
      channel.nack(message, false, true);
      return message.properties.headers ?? {};
    });
    expect(headers).toMatchObject({
      "x-jfast-attempts": 3,
      "x-jfast-task": "delay.declines",
      "x-jfast-error": "Error: card declined",
      "x-jfast-errors": ["attempt 1: Error: card declined", "attempt 2: Error: card declined", "attempt 3: Error: card declined"],
    });
    expect(typeof headers["x-jfast-died-at"]).toBe("number");
  });

  it("runs a delayed, failing-then-succeeding job through the cascade with a worker", async () => {
    const backend = await backendFor("worker-through-all");
    const runs: Array<{ at: number; attempt: number; errors: number }> = [];
    const flaky = defineTask("delay.flaky", async (_p, { job: current }) => {
      runs.push({ at: Date.now(), attempt: current.attempts, errors: current.errors.length });
      if (current.attempts < 3) throw new Error(`declined on attempt ${current.attempts}`);
    });
    const delayed = job(700, {}, "delay.flaky");
    await backend.enqueue({ jobs: [delayed] });
    workers.push(startWorker(backend, [flaky], { backoffBaseMs: 300 }));
    await waitUntil("three runs and an empty queue", async () => {
      const d = await backend.depths();
      return runs.length === 3 && d.ready + d.scheduled + d.running + d.dead === 0;
    });
    expect(runs.map((r) => [r.attempt, r.errors])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ]);
    expect(runs[0]!.at).toBeGreaterThanOrEqual(delayed.availableAt.getTime());
    expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(270);
    expect(runs[2]!.at - runs[1]!.at).toBeGreaterThanOrEqual(540);
  });
});

async function waitUntil<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
