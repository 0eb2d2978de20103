/**
 * Memory of one process that enqueues and then drains a batch (docs/worker.md#memory):
 *
 *   node --expose-gc memory/drain-memory.mjs <postgres|redis> [jobs=200000]
 *   node --expose-gc --max-semi-space-size=16 memory/drain-memory.mjs redis
 *
 * Plain JavaScript, so that any node binary runs it with any V8 flag (no tsx). The process enqueues `jobs` no-op
 * jobs in calls of 5 000, then drains them with one worker at concurrency 10, sampling its memory every 500 ms,
 * and prints one JSON line: the enqueue and drain rates, the peak RSS and the peak of the heap V8 reserved, and the
 * RSS and live heap after a full GC at the end (what the process still holds). PostgreSQL: BENCH_POSTGRES_URL
 * (default the tests' database), in a schema of its own, dropped at the end; Redis: BENCH_REDIS_URL, a queue of its
 * own, whose keys are deleted at the end.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { createJfast, Job, task } from "@jfast/runtime";

if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc (the live heap is read after a full GC)");
const [backend = "postgres", count = "200000"] = process.argv.slice(2);
if (backend !== "postgres" && backend !== "redis") throw new Error(`backend: postgres or redis, not ${backend}`);
const N = Number(count);
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const ns = `drain_memory_${process.pid}`;
const root = await mkdtemp(path.join(tmpdir(), "jfast-drain-memory-"));
await writeFile(path.join(root, "package.json"), '{ "type": "module" }');
await writeFile(
  path.join(root, "jfast.toml"),
  [
    `[service]\nname = "drain-memory"`,
    `[plugins]\nenabled = [${backend === "postgres" ? '"database", "queue"' : '"queue"'}]`,
    backend === "postgres" ? `[plugin.database]\nurl = "${postgresUrl}"\nschema = "${ns}"\npool_size = 12` : "",
    `[plugin.queue]\nbackend = "${backend}"\nconcurrency = 10\nkeep_completed = false${backend === "redis" ? `\nurl = "${redisUrl}"\nname = "${ns}"` : ""}`,
  ].join("\n\n"),
);
let done = 0;
const silent = { debug() {}, info() {}, warn() {}, error: console.error, child: () => silent };
const jfast = await createJfast({ root, env: {}, tasks: [task("drain.noop", async () => void done++)], logger: silent });
await jfast.start();
const queue = jfast.require("queue");
const mb = (bytes) => Math.round(bytes / 1048576);
let peakRss = 0;
let peakHeap = 0;
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapTotal);
}, 500);
let t = performance.now();
for (let i = 0; i < N; i += 5000) await queue.enqueue(Array.from({ length: Math.min(5000, N - i) }, () => new Job({ task: "drain.noop" })));
const enqueuePerS = Math.round(N / ((performance.now() - t) / 1000));
t = performance.now();
const worker = jfast.createWorker({ concurrency: 10 });
worker.start();
while (done < N) await new Promise((resolve) => setTimeout(resolve, 50));
const drainPerS = Math.round(N / ((performance.now() - t) / 1000));
await worker.stop({ graceMs: 1000 });
clearInterval(sampler);
globalThis.gc();
globalThis.gc();
const end = process.memoryUsage();
console.log(
  JSON.stringify({
    node: process.version,
    flags: process.execArgv.filter((a) => a !== "--expose-gc").join(" ") || "default",
    backend,
    jobs: N,
    enqueuePerS,
    drainPerS,
    peakRssMb: mb(peakRss),
    peakHeapReservedMb: mb(peakHeap),
    afterGc: { rssMb: mb(end.rss), liveHeapMb: mb(end.heapUsed), heapReservedMb: mb(end.heapTotal) },
  }),
);
if (backend === "postgres") await jfast.require("database").sql.query(`DROP SCHEMA "${ns}" CASCADE`);
await jfast.stop();
if (backend === "redis") {
  const redis = new Redis(redisUrl);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `*${ns}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
  redis.disconnect();
}
await rm(root, { recursive: true, force: true });
