import { afterEach, describe, expect, it } from "vitest";
import { createPostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { Worker } from "../../src/worker/worker.js";
import { makeJob, withMethod } from "../conformance/harness.js";
import { eventually, openTestBackend, silentLogger, sleep } from "./pg-test-env.js";

describe("postgres: many claimers", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    await env?.cleanup();
    env = null;
  });

  it("20 workers on separate connections handle 2 000 jobs: every job once, none twice", async () => {
    // One pool of 20 connections shared by 20 workers, each with its own backend: 20 claims in flight at once.
    env = await openTestBackend({ poolSize: 20 });
    const { database, schema } = env;
    const handled = new Map<string, string[]>();
    // Workers that found no work and went to wait for it (their backend's waitForWork was called).
    const waiting = new Set<number>();
    const waitsNoted = (backend: QueueBackend, w: number): QueueBackend =>
      withMethod(backend, "waitForWork", (params) => {
        waiting.add(w);
        return backend.waitForWork(params);
      });
    const record = defineTask("load.record", async (_payload, { job }) => {
      const by = handled.get(job.id) ?? [];
      by.push(job.attempts.toString());
      handled.set(job.id, by);
      // A little work so that claims overlap with running jobs.
      if (Math.random() < 0.1) await sleep(5);
    });
    for (let w = 0; w < 20; w++) {
      const backend = waitsNoted(createPostgresBackend({ db: database.sql, schema, queue: "jfast.jobs", logger: silentLogger }), w);
      const worker = new Worker({
        backend,
        lookup: (name) => (name === record.name ? record : undefined),
        execute: (definition, job, cancellation) =>
          Promise.resolve(definition.handler(job.payload, { ctx: { serviceName: "load", require: <T>() => undefined as T }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
        logger: silentLogger,
        concurrency: 5,
        leaseMs: 60_000,
        backoffBaseMs: 50,
        pollIntervalMs: 1000,
        defaultMaxAttempts: 3,
        workerId: `claimer-${w}`,
      });
      worker.start();
      workers.push(worker);
    }
    // The jobs come once every worker has made its first claim (on a connection of its own) and waits for work:
    // each enqueue's NOTIFY then wakes all twenty at once. Enqueued before, the backlog could be drained by the
    // first few workers to get a connection, their prefetch growing with their pace, before the rest claimed.
    await eventually("every worker waiting for work", async () => waiting.size === 20, 30_000);
    const jobs = Array.from({ length: 2000 }, (_, i) => makeJob({ task: "load.record", payload: { i } }));
    for (let i = 0; i < jobs.length; i += 500) {
      await env.backend.enqueue({ jobs: jobs.slice(i, i + 500) });
    }

    await eventually(
      "every job completed",
      async () => {
        const [row] = await database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM jfast_jobs WHERE state = 'completed'");
        return row!.n === 2000;
      },
      120_000,
    );
    // A job's row is committed before its worker finishes its own bookkeeping: stop them first, then count.
    await Promise.all(workers.map((w) => w.stop({ graceMs: 10_000 })));
    const twice = [...handled.entries()].filter(([, runs]) => runs.length > 1);
    expect(twice).toEqual([]);
    expect(handled.size).toBe(2000);
    // Every worker took part: the claims really were concurrent.
    const perWorker = workers.map((w) => w.processedCount);
    expect(perWorker.filter((n) => n > 0).length).toBeGreaterThan(10);
    expect(perWorker.reduce((a, b) => a + b, 0)).toBe(2000);
  }, 180_000);
});
