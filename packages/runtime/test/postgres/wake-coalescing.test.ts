import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { jobsToColumns } from "../../src/backends/postgres/job-rows.js";
import { SQL } from "../../src/backends/postgres/load-sql.js";
import { WAKE_WINDOW_MS } from "../../src/backends/postgres/wake-coalescer.js";
import type { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import type { Worker } from "../../src/worker/worker.js";
import { makeJob, startTestWorker } from "../conformance/harness.js";
import { eventually, openTestBackend, PG_URL, sleep } from "./pg-test-env.js";

/**
 * The wake-up NOTIFY is sent after the enqueue's commit, not inside its transaction (a notifying commit takes a
 * database-wide lock, so concurrent enqueues could not commit as a group), and coalesced: at most one per
 * window from one process. Read from the outside, by a connection LISTENing on the queue's channel.
 */
describe("postgres: wake-ups sent after the commit, coalesced", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  let listener: pg.Client | null = null;
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    await listener?.end();
    listener = null;
    await env?.cleanup();
    env = null;
  });

  /** Notifications arrive within milliseconds of being sent; this long without one means none is coming. */
  const QUIET_MS = 300;

  async function setup() {
    env = await openTestBackend({ poolSize: 8 });
    const notifications: number[] = [];
    listener = new pg.Client({ connectionString: PG_URL });
    await listener.connect();
    listener.on("notification", () => notifications.push(performance.now()));
    await listener.query(`LISTEN "${env.backend.channel}"`);
    return { env, notifications };
  }

  /** Runs `count` enqueues at once; the notifications they cause, and the most one NOTIFY per window allows. */
  async function concurrently(notifications: number[], count: number, enqueue: (job: Job) => Promise<unknown>) {
    const started = performance.now();
    await Promise.all(Array.from({ length: count }, () => enqueue(makeJob())));
    const elapsed = performance.now() - started;
    await sleep(QUIET_MS);
    return { sent: notifications.length, allowed: Math.ceil(elapsed / WAKE_WINDOW_MS) + 2 };
  }

  it("the enqueue statement itself notifies no one, even inside a transaction that commits", async () => {
    const { notifications } = await setup();
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${env!.schema}` });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query(SQL.enqueue, ["jfast.jobs", ...jobsToColumns([makeJob()])]);
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
    await sleep(QUIET_MS);
    expect(notifications).toEqual([]);
  });

  it("200 concurrent enqueues, each its own commit, send a few NOTIFYs, not one each", async () => {
    const { env, notifications } = await setup();
    const { sent, allowed } = await concurrently(notifications, 200, (job) => env.backend.enqueue({ jobs: [job] }));
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThanOrEqual(allowed);
    expect(sent).toBeLessThan(100);
  });

  it("200 concurrent enqueues in callers' transactions send a few NOTIFYs, none before its commit", async () => {
    const { env, notifications } = await setup();
    const { sent, allowed } = await concurrently(notifications, 200, (job) =>
      env.database.sql.transaction((tx) => env.backend.enqueueWithin({ executor: tx, jobs: [job] })),
    );
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThanOrEqual(allowed);
    expect(sent).toBeLessThan(100);
    const [row] = await env.database.sql.query<{ n: string }>("SELECT count(*) AS n FROM jfast_jobs");
    expect(Number(row?.n)).toBe(200);
  });

  it("a job enqueued in a caller's transaction is claimed by a waiting worker soon after the commit, not at the poll", async () => {
    const { env, notifications } = await setup();
    const started: Array<{ id: string; at: number }> = [];
    const mark = defineTask("wake.mark", async (_payload, { job }) => {
      started.push({ id: job.id, at: performance.now() });
    });
    // A poll interval far longer than the test: a job found in time was woken for, not polled.
    workers.push(startTestWorker({ backend: env.backend, tasks: [mark], concurrency: 1, pollIntervalMs: 120_000 }));
    await sleep(200);
    const job = makeJob({ task: "wake.mark" });
    let committedAt = 0;
    await env.database.sql.transaction(async (tx) => {
      await env.backend.enqueueWithin({ executor: tx, jobs: [job] });
      // Held open past the first look-ups: none of them may wake the workers for a row they cannot see yet.
      await sleep(400);
      expect(notifications).toEqual([]);
    });
    committedAt = performance.now();
    await eventually("the worker ran the job", async () => started.length === 1, 20_000);
    expect(started[0]!.id).toBe(job.id);
    expect(started[0]!.at - committedAt).toBeLessThan(10_000);
    // The worker's connection and this test's listener each receive the wake-up: the test's may come a moment later.
    await eventually("the wake-up seen by the test's listener", async () => notifications.length >= 1, 5_000);
  });

  it("a caller's transaction that rolls back wakes no one", async () => {
    const { env, notifications } = await setup();
    await expect(
      env.database.sql.transaction(async (tx) => {
        await env.backend.enqueueWithin({ executor: tx, jobs: [makeJob()] });
        throw new Error("rolled back by the test");
      }),
    ).rejects.toThrow("rolled back by the test");
    await sleep(QUIET_MS);
    expect(notifications).toEqual([]);
  });
});
