import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { openTestBackend } from "../postgres/pg-test-env.js";
import { dropQueue, openBackend as openRedis, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { eventually } from "../conformance/harness.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/keyed-worker.ts", import.meta.url));
const PROCESSES = 2;
const KEYS = ["k1", "k2", "k3"];
const PER_KEY = 6;

interface Run {
  task: string;
  key: string;
  n: number;
  pid: number;
  started_ms: string;
  ended_ms: string;
}

async function startWorkers(settings: Record<string, unknown>): Promise<ChildProcess[]> {
  const children = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, ["--import", "tsx", FIXTURE, JSON.stringify(settings)], { stdio: ["pipe", "pipe", "pipe"] }),
  );
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve, reject) => {
          let stderr = "";
          child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
          child.once("exit", (code) => reject(new Error(`worker process exited (${code}): ${stderr}`)));
          createInterface({ input: child.stdout! }).once("line", () => resolve());
        }),
    ),
  );
  return children;
}

async function stopWorkers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.stdin!.end();
        }),
    ),
  );
}

/** The most handlers of `runs` running at one time, from their start and end times. */
function mostAtOnce(runs: Run[]): number {
  const edges = runs.flatMap((r) => [
    { at: Number(r.started_ms), d: 1 },
    { at: Number(r.ended_ms), d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}

/** Two worker processes run every job; per key, the cap and the order hold across both (docs/flow-control.md). */
async function runAcrossProcesses(backend: QueueBackend, query: (sql: string) => Promise<Run[]>, settings: Record<string, unknown>): Promise<void> {
  await query("CREATE TABLE key_runs (job_id text PRIMARY KEY, task text NOT NULL, key text NOT NULL, n integer NOT NULL, pid integer NOT NULL, started_ms bigint NOT NULL, ended_ms bigint NOT NULL)");
  const children = await startWorkers(settings);
  try {
    const job = (task: string, key: string, n: number) => {
      const made = new Job({ task, payload: { key, n }, maxAttempts: 1 });
      // What the enqueuing service's QueueProvider.prepare fills in from the task's key option.
      made.limitKey = key;
      return made;
    };
    const jobs: Job[] = [];
    for (let n = 0; n < PER_KEY; n++) for (const key of KEYS) jobs.push(job("keys.capped", key, n), job("keys.ordered", key, n));
    await backend.enqueue({ jobs });
    const total = 2 * KEYS.length * PER_KEY;
    await eventually("every job run once", async () => (await query("SELECT * FROM key_runs")).length === total, 120_000);
  } finally {
    await stopWorkers(children);
  }
  const runs = await query("SELECT * FROM key_runs");
  const of = (task: string, key: string) => runs.filter((r) => r.task === task && r.key === key);
  expect(new Set(runs.map((r) => r.pid)).size).toBe(PROCESSES);
  for (const key of KEYS) {
    // At most one job of a key at a time, across both processes.
    expect(mostAtOnce(of("keys.capped", key))).toBe(1);
    // One at a time and in enqueue order.
    const ordered = of("keys.ordered", key).sort((a, b) => Number(a.started_ms) - Number(b.started_ms));
    expect(mostAtOnce(ordered)).toBe(1);
    expect(ordered.map((r) => Number(r.n))).toEqual(Array.from({ length: PER_KEY }, (_, n) => n));
  }
  // Keys ran side by side: the cap is per key, not for the task.
  expect(mostAtOnce(runs.filter((r) => r.task === "keys.capped"))).toBeGreaterThan(1);
}

describe("flow control per key across processes", () => {
  it("PostgreSQL: two worker processes keep per-key concurrency and order per key", async () => {
    const { backend, cleanup, schema, database } = await openTestBackend();
    try {
      await runAcrossProcesses(backend, (sql) => database.sql.query<Run>(sql), { backend: "postgres", schema, queue: "jfast.jobs", url: "" });
    } finally {
      await cleanup();
    }
  }, 240_000);

  it("Redis: two worker processes keep per-key concurrency and order per key", async () => {
    const { cleanup, schema, database } = await openTestBackend();
    const queue = uniqueQueue("key-limits-procs");
    const backend = await openRedis(queue);
    try {
      await runAcrossProcesses(backend, (sql) => database.sql.query<Run>(sql), { backend: "redis", schema, queue, url: REDIS_URL });
    } finally {
      await backend.close();
      await dropQueue(queue);
      await cleanup();
    }
  }, 240_000);
});
