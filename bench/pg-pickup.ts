/**
 * PostgreSQL queue measurements, through the runtime's public API on a real server:
 *   1. pickup latency (enqueue → handler start) for an idle worker, p50/p99: enqueued in the worker's own process
 *      (handed over in memory, docs/postgres.md#in-process-hand-off) and from another jfast instance with its own
 *      pool (stored ready, the worker woken by LISTEN/NOTIFY and claiming);
 *   2. throughput of one worker at concurrency 10 on a backlog of no-op jobs, jobs/s;
 *   3. the cost of /ready (queue depths) and of a pickup when jfast_jobs holds a million finished rows.
 *
 *   npx tsx bench/pg-pickup.ts            (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
 *   PICKUPS=500 BACKLOG=20000 FINISHED=1000000 npx tsx bench/pg-pickup.ts
 *
 * Runs in its own schema, dropped at the end. Timings are of this machine at this moment: read them as
 * orders of magnitude, and compare runs on the same machine only.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { createJfast, Job, task, type Jfast, type QueueProvider } from "../packages/runtime/src/index.js";
import { percentile } from "./lib/stats.js";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const PICKUPS = Number(process.env.PICKUPS ?? 300);
const BACKLOG = Number(process.env.BACKLOG ?? 10_000);
const FINISHED = Number(process.env.FINISHED ?? 1_000_000);
const SCHEMA = `jfast_bench_${randomBytes(4).toString("hex")}`;

let started: ((at: number) => void) | null = null;
let done = 0;
const ping = task("bench.ping", async () => {
  started?.(performance.now());
});
const noop = task("bench.noop", async () => {
  done++;
});

function summary(values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(2)} ms, p99 ${percentile(s, 99).toFixed(2)} ms, max ${s.at(-1)!.toFixed(2)} ms (n=${s.length})`;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pickupLatency(enqueuer: Jfast, label: string): Promise<void> {
  const queue = enqueuer.require<QueueProvider>("queue");
  const total: number[] = [];
  const afterCommit: number[] = [];
  for (let i = 0; i < PICKUPS; i++) {
    // Idle long enough that the worker is asleep in waitForWork (LISTEN), not between claims.
    await sleep(20);
    const handlerStarted = new Promise<number>((resolve) => (started = resolve));
    const t0 = performance.now();
    await queue.enqueue(new Job({ task: "bench.ping" }));
    const t1 = performance.now();
    const t2 = await handlerStarted;
    total.push(t2 - t0);
    afterCommit.push(t2 - t1);
  }
  console.log(`pickup ${label}: enqueue call → handler start: ${summary(total)}`);
  // Handed over in process, the handler starts before enqueue() returns: there is no "after the commit".
  if (afterCommit.some((ms) => ms > 0)) console.log(`pickup ${label}: enqueue committed → handler start: ${summary(afterCommit)}`);
}

async function throughput(jfast: Jfast): Promise<void> {
  const queue = jfast.require<QueueProvider>("queue");
  for (let i = 0; i < BACKLOG; i += 1000) {
    await queue.enqueue(Array.from({ length: Math.min(1000, BACKLOG - i) }, () => new Job({ task: "bench.noop" })));
  }
  done = 0;
  const worker = jfast.createWorker({ concurrency: 10 });
  const t0 = performance.now();
  worker.start();
  while (done < BACKLOG) await sleep(5);
  const seconds = (performance.now() - t0) / 1000;
  await worker.stop({ graceMs: 1000 });
  console.log(`throughput: one worker, concurrency 10, ${BACKLOG} no-op jobs in ${seconds.toFixed(2)} s = ${Math.round(BACKLOG / seconds)} jobs/s`);
}

async function fillFinished(): Promise<void> {
  const client = new pg.Client({ connectionString: URL, options: `-c search_path=${SCHEMA}` });
  await client.connect();
  try {
    const t0 = performance.now();
    const dead = Math.round(FINISHED * 0.3);
    await client.query(
      `INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, finished_at)
       SELECT 'done-' || g, 'jfast.jobs', 'bench.old', '{"invoice_id": 1}', 'completed', 1, 3, now() - g * interval '1 second'
       FROM generate_series(1, $1) g`,
      [FINISHED - dead],
    );
    await client.query(
      `INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, died_at, errors)
       SELECT 'dead-' || g, 'jfast.jobs', 'bench.old', '{"invoice_id": 1}', 'dead', 3, 3, now() - g * interval '1 second',
              '[{"attempt":3,"class":"Error","message":"card declined"}]'
       FROM generate_series(1, $1) g`,
      [dead],
    );
    await client.query("VACUUM ANALYZE jfast_jobs");
    console.log(`filled jfast_jobs with ${FINISHED - dead} completed + ${dead} dead rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const explain = await client.query(
      `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON)
       SELECT (SELECT count(*) FROM jfast_jobs WHERE queue = 'jfast.jobs' AND state = 'dead') AS dead`,
    );
    const line = explain.rows.map((r) => r["QUERY PLAN"] as string).find((l) => l.startsWith("Execution Time"));
    console.log(`for comparison, counting the dead rows instead of reading the counter: ${line}`);

    // The claim's plan among the finished rows, executed on 10 fresh jobs inside a rolled-back transaction.
    const claim = await readFile(new globalThis.URL("../packages/runtime/src/backends/postgres/sql/claim.sql", import.meta.url), "utf8");
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO jfast_jobs (id, queue, task, payload) SELECT 'fresh-' || g, 'jfast.jobs', 'bench.noop', '{}' FROM generate_series(1, 10) g`,
    );
    const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${claim}`, [
      "jfast.jobs",
      10,
      "explain",
      30_000,
      JSON.stringify({ attempt: 0, class: "WorkerLost", message: "bench", reason: "worker lost" }),
      [],
    ]);
    await client.query("ROLLBACK");
    console.log("claim plan (10 ready jobs among the finished rows):\n" + plan.rows.map((r) => "  " + r["QUERY PLAN"]).join("\n"));
  } finally {
    await client.end();
  }
}

async function readinessCost(jfast: Jfast): Promise<void> {
  const queue = jfast.require<QueueProvider>("queue");
  const samples: number[] = [];
  let depths = await queue.depths();
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    depths = await queue.depths();
    samples.push(performance.now() - t0);
  }
  console.log(`depths() on ${FINISHED} finished rows: ${summary(samples)}; depths = ${JSON.stringify(depths)}`);
  // /ready itself (uncached: its 1 s cache window is left to expire between probes).
  const probes: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(1100);
    const t0 = performance.now();
    const response = await jfast.fetch(new Request("http://bench/ready"));
    await response.json();
    probes.push(performance.now() - t0);
  }
  console.log(`GET /ready (uncached) on ${FINISHED} finished rows: ${summary(probes)}`);
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${cpus().length} CPU(s), load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; schema ${SCHEMA}`);
  const root = await mkdtemp(path.join(tmpdir(), "jfast-bench-"));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "bench"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\npool_size = 12\n[plugin.queue]\nbackend = "postgres"\nconcurrency = 10\n`,
  );
  const open = async () => {
    const instance = await createJfast({
      root,
      env: {},
      tasks: [ping, noop],
      config: { plugin: { database: { url: URL, schema: SCHEMA }, observability: undefined } },
      logger: { debug() {}, info() {}, warn: console.warn, error: console.error },
    });
    await instance.start();
    return instance;
  };
  const jfast = await open();
  // Another service instance that only enqueues: its jobs go through the table, NOTIFY and a claim.
  const producer = await open();
  try {
    const worker = jfast.createWorker({ concurrency: 10 });
    worker.start();
    await pickupLatency(jfast, "(empty table, enqueued in the worker's process)");
    await pickupLatency(producer, "(empty table, enqueued by another instance)");
    await worker.stop({ graceMs: 1000 });

    await throughput(jfast);

    await fillFinished();
    await readinessCost(jfast);
    const again = jfast.createWorker({ concurrency: 10 });
    again.start();
    await pickupLatency(jfast, `(${FINISHED} finished rows, enqueued in the worker's process)`);
    await pickupLatency(producer, `(${FINISHED} finished rows, enqueued by another instance)`);
    await again.stop({ graceMs: 1000 });
  } finally {
    await producer.stop();
    await jfast.stop();
    const admin = new pg.Client({ connectionString: URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
