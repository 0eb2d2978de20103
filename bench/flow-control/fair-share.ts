/**
 * Fair share across keys (docs/flow-control.md#fair-share-across-keys), through the runtime's public API on
 * PostgreSQL and Redis:
 *   1. the figure: JOBS waiting jobs of tenant A, then 10 of tenant B: how many of A's start after B's 10 were
 *      enqueued and before the last of them starts (B's 10 must all start before A's next 100);
 *   2. throughput of one worker at concurrency 10 on a backlog of JOBS no-op jobs: a plain task in a service with no
 *      fair task (the base), the same task beside the fair one, then a task with `fairness: "tenant"` whose jobs are
 *      spread over 1, 100 and 1 000 tenants, jobs/s and the ratio to the base, and what a key costs per claim
 *      ((fair time − base time) / claims / keys waiting), and how fast each backlog was enqueued (batches of 1 000).
 *
 *   npx tsx bench/flow-control/fair-share.ts             (DATABASE_URL, REDIS_URL as the tests use them)
 *   JOBS=20000 BACKENDS=postgres npx tsx bench/flow-control/fair-share.ts
 *
 * Each backend runs in its own schema or queue name, dropped at the end. Timings are of this machine at this
 * moment: read them as orders of magnitude, and compare runs on the same machine only.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { Redis } from "ioredis";
import { createJfast, Job, task, type Jfast } from "../../packages/runtime/src/index.js";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const JOBS = Number(process.env.JOBS ?? 20_000);
const BACKENDS = (process.env.BACKENDS ?? "postgres,redis").split(",") as Array<"postgres" | "redis">;
/** Numbers of keys the throughput runs spread the fair task's jobs over; empty (KEYS=) measures the figure only. */
const KEYS = (process.env.KEYS ?? "1,100,1000").split(",").filter(Boolean).map(Number);
const CONCURRENCY = 10;

const started: string[] = [];
let done = 0;
const plain = task("bench.plain", async () => void done++);
const fair = task("bench.fair", { fairness: "tenant" }, async (_p: { i: number }, { job }) => {
  started.push(job.tenantId ?? "");
  done++;
});

async function open(backend: "postgres" | "redis", root: string, schema: string, queue: string, tasks = [plain, fair]): Promise<Jfast> {
  await writeFile(
    path.join(root, "jfast.toml"),
    backend === "postgres"
      ? `[service]\nname = "bench"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${DATABASE_URL}"\nschema = "${schema}"\npool_size = 12\n[plugin.queue]\nbackend = "postgres"\nconcurrency = ${CONCURRENCY}\nkeep_completed = false\n`
      : `[service]\nname = "bench"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\nconcurrency = ${CONCURRENCY}\nkeep_completed = false\n`,
  );
  const jfast = await createJfast({ root, env: {}, tasks, logger: { debug() {}, info() {}, warn: console.warn, error: console.error } });
  await jfast.start();
  return jfast;
}

async function enqueue(jfast: Jfast, jobs: Job[]): Promise<void> {
  const queue = jfast.require("queue");
  for (let i = 0; i < jobs.length; i += 1000) await queue.enqueue(jobs.slice(i, i + 1000));
}

/**
 * Milliseconds to drain `total` jobs at the rate measured from the first job's start: the worker's own start (its
 * heartbeat thread, its first claim) is left out, as it is paid once per worker, not per job.
 */
async function drain(jfast: Jfast, total: number): Promise<number> {
  done = 0;
  const worker = jfast.createWorker({ concurrency: CONCURRENCY });
  worker.start();
  while (done < 1) await new Promise((r) => setTimeout(r, 1));
  const t0 = performance.now();
  const from = done;
  while (done < total) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - t0;
  await worker.stop({ graceMs: 1000 });
  return from >= total ? ms : (ms * total) / (total - from);
}

async function figure(jfast: Jfast): Promise<string> {
  await enqueue(jfast, Array.from({ length: JOBS }, (_, i) => new Job({ task: "bench.fair", payload: { i }, tenantId: "tenant-a" })));
  started.length = 0;
  done = 0;
  const worker = jfast.createWorker({ concurrency: CONCURRENCY });
  worker.start();
  while (done < 200) await new Promise((r) => setTimeout(r, 2));
  await enqueue(jfast, Array.from({ length: 10 }, (_, i) => new Job({ task: "bench.fair", payload: { i }, tenantId: "tenant-b" })));
  // Counted from the moment B's jobs are stored (the enqueue returned), as the figure is stated.
  const before = started.length;
  while (started.filter((t) => t === "tenant-b").length < 10) await new Promise((r) => setTimeout(r, 2));
  const lastB = started.lastIndexOf("tenant-b");
  const aBetween = started.slice(before, lastB + 1).filter((t) => t === "tenant-a").length;
  await worker.stop({ graceMs: 1000 });
  // The rest of A's backlog goes, so the throughput runs start empty.
  await drain(jfast, JOBS + 10 - started.length);
  return `tenant B's 10 jobs all started with ${aBetween} of tenant A's started after B's were enqueued (of ${JOBS} waiting; the figure asks for fewer than 100)`;
}

/** Jobs/s drained by the worker, and jobs/s the enqueue stored them at (batches of 1 000). */
async function throughput(jfast: Jfast, keys: number | null): Promise<{ rate: number; enqueued: number }> {
  const jobs = Array.from({ length: JOBS }, (_, i) =>
    keys === null ? new Job({ task: "bench.plain", payload: { i } }) : new Job({ task: "bench.fair", payload: { i }, tenantId: `t${i % keys}` }),
  );
  const t0 = performance.now();
  await enqueue(jfast, jobs);
  const enqueueMs = performance.now() - t0;
  const ms = await drain(jfast, JOBS);
  return { rate: (JOBS / ms) * 1000, enqueued: (JOBS / enqueueMs) * 1000 };
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${cpus().length} CPU(s), load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; ${JOBS} jobs, concurrency ${CONCURRENCY}`);
  for (const backend of BACKENDS) {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-bench-fair-"));
    const schema = `jfast_bench_${randomBytes(4).toString("hex")}`;
    const queue = `bench-fair-${randomBytes(4).toString("hex")}`;
    const jfast = await open(backend, root, schema, queue);
    // The base: the plain task in a service of its own, whose queue has no fair task (no limits at claim at all).
    const alone = await open(backend, root, `${schema}_plain`, `${queue}-plain`, [plain]);
    try {
      console.log(`${backend}: ${await figure(jfast)}`);
      if (KEYS.length === 0) continue;
      const { rate: base, enqueued: baseEnqueued } = await throughput(alone, null);
      console.log(`${backend}: plain task ${base.toFixed(0)} jobs/s (a queue with no fair task), enqueued at ${baseEnqueued.toFixed(0)} jobs/s`);
      const { rate: beside } = await throughput(jfast, null);
      console.log(`${backend}: plain task beside the fair one ${beside.toFixed(0)} jobs/s, ${((beside / base) * 100).toFixed(0)} % of plain`);
      for (const keys of KEYS) {
        const { rate, enqueued } = await throughput(jfast, keys);
        // A claim takes up to CONCURRENCY jobs: per claim, the extra time over plain, divided by the keys waiting.
        const extraPerJobUs = (1e6 / rate - 1e6 / base);
        const perKeyPerClaimUs = (extraPerJobUs * CONCURRENCY) / keys;
        console.log(
          `${backend}: fairness over ${keys} key(s) ${rate.toFixed(0)} jobs/s, ${((rate / base) * 100).toFixed(0)} % of plain, ${perKeyPerClaimUs.toFixed(1)} us per key per claim; enqueued at ${enqueued.toFixed(0)} jobs/s, ${((enqueued / baseEnqueued) * 100).toFixed(0)} % of plain`,
        );
      }
    } finally {
      await alone.stop();
      await jfast.stop();
      await rm(root, { recursive: true, force: true });
      if (backend === "postgres") {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.query(`DROP SCHEMA IF EXISTS ${schema}_plain CASCADE`);
        await client.end();
      } else {
        const redis = new Redis(REDIS_URL);
        const found = await redis.keys(`*${queue}*`);
        if (found.length > 0) await redis.del(...found);
        redis.disconnect();
      }
    }
  }
}

await main();
