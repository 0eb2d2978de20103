import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

/** What a worker does with entries on the ready list that are not jobs: set them aside, visibly, and carry on. */
describe("redis: garbage on the ready list", () => {
  let queue: string;
  let backend: RedisBackend;
  let worker: Worker | null = null;
  const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const raw = rawClient();

  beforeEach(async () => {
    queue = uniqueQueue("garbage");
    warnings.length = 0;
    backend = await openBackend(queue, { logger: { warn: (message, fields) => warnings.push({ message, ...(fields ? { fields } : {}) }) } });
  });
  afterEach(async () => {
    await worker?.stop({ graceMs: 0 });
    worker = null;
    await backend.close();
    await dropQueue(queue);
  });
  afterAll(() => raw.disconnect());

  function startWorker(ran: string[]): Worker {
    const task = defineTask("garbage.real", async (_payload, { job }) => {
      ran.push(job.id);
    });
    worker = new Worker({
      backend,
      lookup: (name) => (name === task.name ? task : undefined),
      execute: (definition, job, cancellation) =>
        Promise.resolve(definition.handler(job.payload, { ctx: { serviceName: "garbage", require: <T,>() => undefined as T }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
      logger: createLogger({ service: "garbage", level: "silent" }),
      concurrency: 4,
      leaseMs: 30_000,
      backoffBaseMs: 50,
      pollIntervalMs: 500,
      defaultMaxAttempts: 3,
    });
    worker.start();
    return worker;
  }

  it("dead-letters unknown ids, unreadable JSON and foreign entries, and keeps running real jobs", async () => {
    const before = makeJob({ task: "garbage.real" });
    await backend.enqueue({ jobs: [before] });
    // A naive producer pushing a JSON document instead of an id, an id with nothing behind it,
    // and a job whose stored JSON was damaged.
    const foreign = JSON.stringify({ task: "garbage.real", payload: { x: 1 } });
    await raw.lpush(backend.keys.ready, foreign, "no-such-job");
    const damaged = makeJob({ task: "garbage.real" });
    await backend.enqueue({ jobs: [damaged] });
    await raw.hset(backend.keys.job(damaged.id), "json", "{not json");
    const after = makeJob({ task: "garbage.real" });
    await backend.enqueue({ jobs: [after] });

    const ran: string[] = [];
    startWorker(ran);
    await eventually("both real jobs", async () => ran.length === 2);
    expect(ran.sort()).toEqual([before.id, after.id].sort());

    const dead = await eventually("three dead letters", async () => {
      const list = await backend.listDead({ limit: 10 });
      return list.length === 3 ? list : null;
    });
    const byId = new Map(dead.map((d) => [d.job.id, d]));
    for (const id of [foreign, "no-such-job", damaged.id]) {
      const entry = byId.get(id);
      expect(entry, id).toBeDefined();
      expect(entry!.job.task).toBe("jfast.corrupt_job");
      expect(entry!.lastError).toMatchObject({ class: "CorruptJob", reason: "corrupt job" });
    }
    // The original text is kept for whoever repairs it.
    expect(byId.get(foreign)!.job.payload).toEqual({ raw: foreign });
    expect(byId.get(damaged.id)!.job.payload).toEqual({ raw: "{not json" });
    expect(byId.get(damaged.id)!.lastError!.message).toMatch(/not valid JSON/);
    expect(await backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 3 });
    expect(warnings.map((w) => w.message).join("\n")).toMatch(/no job behind it/);
    expect(warnings.map((w) => w.message).join("\n")).toMatch(/could not be read/);
    expect(worker!.activeJobs).toEqual([]);

    // Operators clear them like any dead letter.
    expect((await backend.discardDead({ all: true })).discarded).toHaveLength(3);
    expect((await backend.depths()).dead).toBe(0);
  });

  it("dead-letters a job hash without a state field, with its text and the reason, and runs the next job", async () => {
    const stateless = makeJob({ task: "garbage.real" });
    await backend.enqueue({ jobs: [stateless] });
    const storedJson = await raw.hget(backend.keys.job(stateless.id), "json");
    await raw.hdel(backend.keys.job(stateless.id), "state");
    const after = makeJob({ task: "garbage.real" });
    await backend.enqueue({ jobs: [after] });

    const ran: string[] = [];
    startWorker(ran);
    await eventually("the real job", async () => ran.length === 1);
    expect(ran).toEqual([after.id]);
    const [dead] = await eventually("one dead letter", async () => {
      const list = await backend.listDead({ limit: 10 });
      return list.length === 1 ? list : null;
    });
    expect(dead!.job.id).toBe(stateless.id);
    expect(dead!.job.task).toBe("jfast.corrupt_job");
    expect(dead!.job.payload).toEqual({ raw: storedJson });
    expect(dead!.lastError).toMatchObject({ class: "CorruptJob", reason: "corrupt job" });
    expect(dead!.lastError!.message).toMatch(/no state field/);
    expect((await backend.getJob({ id: stateless.id }))?.state).toBe("dead");
    expect(await backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 1 });
    expect(warnings.some((w) => w.message.includes("no state field") && w.fields?.entry === stateless.id)).toBe(true);
  });

  it("drops a second reference to a running job instead of running it twice", async () => {
    const job = makeJob({ task: "garbage.real" });
    await backend.enqueue({ jobs: [job] });
    const [claimed] = await backend.claim({ workerId: "first", limit: 1, leaseMs: 30_000 });
    expect(claimed?.id).toBe(job.id);
    await raw.lpush(backend.keys.ready, job.id);
    expect(await backend.claim({ workerId: "second", limit: 5, leaseMs: 30_000 })).toEqual([]);
    expect(await raw.llen(backend.keys.ready)).toBe(0);
    expect(warnings.some((w) => w.message.includes("second reference") && w.fields?.state === "running")).toBe(true);
    expect((await backend.getJob({ id: job.id }))?.state).toBe("running");
    expect((await backend.getJob({ id: job.id }))?.lockedBy).toBe("first");
  });
});
