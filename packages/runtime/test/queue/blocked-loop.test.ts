import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { eventually, sleep, startTestWorker } from "../conformance/harness.js";
import { openTestBackend } from "../postgres/pg-test-env.js";
import { AMQP_URL, dropQueue as dropRabbitQueue, openBackend as openRabbit, uniqueQueue as uniqueRabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { dropQueue as dropRedisQueue, openBackend as openRedis, REDIS_URL, uniqueQueue as uniqueRedisQueue } from "../redis/redis-test-env.js";

/**
 * A handler that keeps its process's event loop busy for three leases, in a worker process of its own, while a
 * worker of this process claims on the same queue: the job is run once, completed, with no lost attempt
 * (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease). The worker process's main thread cannot beat meanwhile; its heartbeat thread does.
 */
const FIXTURE = fileURLToPath(new URL("./fixtures/blocking-worker.ts", import.meta.url));
const LEASE_MS = 1000;
const BLOCK_MS = 3 * LEASE_MS;

interface Child {
  process: ChildProcess;
  lines: Array<Record<string, unknown>>;
}

function startChild(settings: Record<string, unknown>): Promise<Child> {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, JSON.stringify(settings)], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: Array<Record<string, unknown>> = [];
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`worker process exited (${code}): ${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      lines.push(parsed);
      if (parsed.ready) resolve({ process: child, lines });
    });
  });
}

function stopChild(child: Child): Promise<void> {
  return new Promise((resolve) => {
    if (child.process.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.process.kill("SIGKILL"), 10_000);
    child.process.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.process.stdin!.end();
  });
}

async function runBlocked(params: {
  backend: QueueBackend;
  settings: Record<string, unknown>;
  query: <R>(sql: string) => Promise<R[]>;
  keepsFinished: boolean;
}): Promise<void> {
  const { backend, query } = params;
  await query("CREATE TABLE blocked_runs (job_id text NOT NULL, pid integer NOT NULL, attempt integer NOT NULL)");
  const child = await startChild({ ...params.settings, leaseMs: LEASE_MS, blockMs: BLOCK_MS });
  const localRuns: string[] = [];
  try {
    const job = new Job({ task: "blocking.cpu", payload: {}, maxAttempts: 2 });
    await backend.enqueue({ jobs: [job] });
    await eventually("the worker process starts the job", async () => child.lines.some((l) => l.started === job.id), 20_000);
    // Now this process claims too, all the while the other one's loop is blocked.
    const claimer = startTestWorker({
      backend,
      tasks: [defineTask("blocking.cpu", (_payload, { job: j }) => void localRuns.push(j.id))],
      concurrency: 1,
      pollIntervalMs: 100,
      leaseMs: LEASE_MS,
    });
    try {
      await eventually("the worker process finishes the job", async () => child.lines.some((l) => l.finished === job.id), 30_000);
      await sleep(2 * LEASE_MS);
    } finally {
      await claimer.stop({ graceMs: 1000 });
    }
    const runs = await query<{ pid: number; attempt: number }>("SELECT pid, attempt FROM blocked_runs");
    expect(runs).toEqual([{ pid: child.process.pid, attempt: 1 }]);
    expect(localRuns).toEqual([]);
    const depths = await backend.depths();
    expect(depths.running + depths.ready + depths.dead).toBe(0);
    if (params.keepsFinished) {
      const info = await backend.getJob({ id: job.id });
      expect({ state: info?.state, errors: info?.job.errors }).toEqual({ state: "completed", errors: [] });
    }
  } finally {
    await stopChild(child);
  }
}

describe("a worker process whose event loop is blocked for three leases keeps its job", () => {
  it("PostgreSQL", async () => {
    const { backend, cleanup, schema, database } = await openTestBackend();
    try {
      await runBlocked({ backend, query: (sql) => database.sql.query(sql), settings: { backend: "postgres", schema, queue: "jfast.jobs", url: "" }, keepsFinished: true });
    } finally {
      await cleanup();
    }
  }, 120_000);

  it("PostgreSQL, the worker's first job blocking from its first line", async () => {
    const { backend, cleanup, schema, database } = await openTestBackend();
    try {
      await runBlocked({ backend, query: (sql) => database.sql.query(sql), settings: { backend: "postgres", schema, queue: "jfast.jobs", url: "", blockAtOnce: true }, keepsFinished: true });
    } finally {
      await cleanup();
    }
  }, 120_000);

  it("Redis", async () => {
    const { cleanup, schema, database } = await openTestBackend();
    const queue = uniqueRedisQueue("blocked");
    const backend = await openRedis(queue);
    try {
      await runBlocked({ backend, query: (sql) => database.sql.query(sql), settings: { backend: "redis", schema, queue, url: REDIS_URL }, keepsFinished: true });
    } finally {
      await backend.close();
      await dropRedisQueue(queue);
      await dropRedisQueue(`${queue}.other`);
      await cleanup();
    }
  }, 120_000);

  it("RabbitMQ", async () => {
    const { cleanup, schema, database } = await openTestBackend();
    const queue = uniqueRabbitQueue("blocked");
    const backend = await openRabbit(queue);
    try {
      await runBlocked({ backend, query: (sql) => database.sql.query(sql), settings: { backend: "rabbitmq", schema, queue, url: AMQP_URL }, keepsFinished: false });
    } finally {
      await backend.close();
      await dropRabbitQueue(queue);
      await dropRabbitQueue(`${queue}.other`);
      await cleanup();
    }
  }, 120_000);
});
