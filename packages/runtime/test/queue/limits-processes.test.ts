import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { openTestBackend } from "../postgres/pg-test-env.js";
import { dropQueue, openBackend as openRedis, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { eventually } from "../conformance/harness.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/limited-worker.ts", import.meta.url));
const PROCESSES = 3;
const CAPPED = 24;
const RATED = 15;
const FREE = 10;

interface Run {
  task: string;
  pid: number;
  started_ms: string;
  ended_ms: string;
}

/** Starts the worker processes and waits until each has declared its limits and started its worker. */
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

/** The most handlers of `task` running at one time, from their start and end times. */
function mostAtOnce(runs: Run[]): number {
  const edges = runs.flatMap((r) => [
    { at: Number(r.started_ms), d: 1 },
    { at: Number(r.ended_ms), d: -1 },
  ]);
  // An end before a start at the same millisecond: the slot was freed first.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}

/** Enqueues, lets three worker processes run everything, and checks the caps from what their handlers recorded. */
async function runAcrossProcesses(backend: QueueBackend, query: (sql: string) => Promise<Run[]>, settings: Record<string, unknown>): Promise<void> {
  await query("CREATE TABLE limit_runs (job_id text PRIMARY KEY, task text NOT NULL, pid integer NOT NULL, started_ms bigint NOT NULL, ended_ms bigint NOT NULL)");
  const children = await startWorkers(settings);
  try {
    const job = (task: string, i: number) => new Job({ task, payload: { i }, maxAttempts: 1 });
    await backend.enqueue({
      jobs: [
        ...Array.from({ length: CAPPED }, (_, i) => job("limits.capped", i)),
        ...Array.from({ length: RATED }, (_, i) => job("limits.rated", i)),
        ...Array.from({ length: FREE }, (_, i) => job("limits.free", i)),
      ],
    });
    await eventually("every job run once", async () => (await query("SELECT * FROM limit_runs")).length === CAPPED + RATED + FREE, 120_000);
  } finally {
    await stopWorkers(children);
  }
  const runs = await query("SELECT * FROM limit_runs");
  const of = (task: string) => runs.filter((r) => r.task === task);
  // The work was spread over the processes, and the cap held across all of them.
  expect(new Set(of("limits.capped").map((r) => r.pid)).size).toBeGreaterThan(1);
  expect(mostAtOnce(of("limits.capped"))).toBeLessThanOrEqual(2);
  // Rate: no six starts within one 500 ms window (a handler starts a moment after its claim counted the start).
  const starts = of("limits.rated").map((r) => Number(r.started_ms)).sort((a, b) => a - b);
  for (let i = 5; i < starts.length; i++) expect(starts[i]! - starts[i - 5]!).toBeGreaterThan(500 - 60);
  // Three windows at least for fifteen starts at five per window.
  expect(starts.at(-1)! - starts[0]!).toBeGreaterThan(2 * 500 - 60);
  const depths = await backend.depths();
  expect(depths.ready + depths.running + depths.dead).toBe(0);
}

describe("task limits across processes", () => {
  it("PostgreSQL: three worker processes keep a concurrency cap and a rate limit", async () => {
    const { backend, cleanup, schema, database } = await openTestBackend();
    try {
      await runAcrossProcesses(backend, (sql) => database.sql.query<Run>(sql), { backend: "postgres", schema, queue: "jfast.jobs", url: "" });
    } finally {
      await cleanup();
    }
  }, 240_000);

  it("Redis: three worker processes keep a concurrency cap and a rate limit", async () => {
    const { backend: pgHolder, cleanup, schema, database } = await openTestBackend();
    const queue = uniqueQueue("limits-procs");
    const backend = await openRedis(queue);
    try {
      void pgHolder;
      await runAcrossProcesses(backend, (sql) => database.sql.query<Run>(sql), { backend: "redis", schema, queue, url: REDIS_URL });
    } finally {
      await backend.close();
      await dropQueue(queue);
      await cleanup();
    }
  }, 240_000);
});
