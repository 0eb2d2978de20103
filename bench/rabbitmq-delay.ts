/**
 * RabbitMQ queue measurements, through the runtime's public API on a real broker:
 *   1. pickup latency (enqueue → handler start) of an idle worker, p50/p99;
 *   2. delay accuracy: how late delayed jobs start after their due time (never early), p50/p99/max;
 *   3. throughput of one worker at concurrency 10 on a backlog of no-op jobs, jobs/s.
 *
 *   npx tsx bench/rabbitmq-delay.ts            (AMQP_URL, default amqp://guest:guest@127.0.0.1:5672)
 *   PICKUPS=300 DELAYED=300 BACKLOG=10000 npx tsx bench/rabbitmq-delay.ts
 *
 * Runs on its own queue, deleted at the end. Timings are of this machine at this moment: read them as orders
 * of magnitude, and compare runs on the same machine only.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import amqp from "amqplib";
import { createJfast, Job, task, type Jfast, type QueueProvider } from "../packages/runtime/src/index.js";
import { percentile } from "./lib/stats.js";

const URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const PICKUPS = Number(process.env.PICKUPS ?? 200);
const DELAYED = Number(process.env.DELAYED ?? 200);
const BACKLOG = Number(process.env.BACKLOG ?? 5000);
const QUEUE = `jfast-bench.${randomBytes(4).toString("hex")}`;
const LEVELS = 25;

let started: ((at: number) => void) | null = null;
const lateness: number[] = [];
let done = 0;
const ping = task("bench.ping", async () => {
  started?.(performance.now());
});
const due = task("bench.due", async (_payload, { job }) => {
  lateness.push(Date.now() - job.availableAt.getTime());
});
const noop = task("bench.noop", async () => {
  done++;
});

function summary(values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(1)} ms, p50 ${percentile(s, 50).toFixed(1)} ms, p99 ${percentile(s, 99).toFixed(1)} ms, max ${s.at(-1)!.toFixed(1)} ms (n=${s.length})`;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pickupLatency(jfast: Jfast): Promise<void> {
  const queue = jfast.require<QueueProvider>("queue");
  const total: number[] = [];
  for (let i = 0; i < PICKUPS; i++) {
    await sleep(20);
    const handlerStarted = new Promise<number>((resolve) => (started = resolve));
    const t0 = performance.now();
    await queue.enqueue(new Job({ task: "bench.ping" }));
    total.push((await handlerStarted) - t0);
  }
  console.log(`pickup: enqueue call → handler start: ${summary(total)}`);
}

async function delayAccuracy(jfast: Jfast): Promise<void> {
  const queue = jfast.require<QueueProvider>("queue");
  lateness.length = 0;
  // Spread over 0.2–5 s, published in random order, so many levels of the cascade are in use at once.
  const jobs = Array.from({ length: DELAYED }, () => new Job({ task: "bench.due", delayMs: 200 + Math.floor(Math.random() * 4800) }));
  for (let i = 0; i < jobs.length; i += 50) await queue.enqueue(jobs.slice(i, i + 50));
  while (lateness.length < DELAYED) await sleep(20);
  console.log(`delay accuracy: handler start − due time: ${summary(lateness)}; early: ${lateness.filter((l) => l < 0).length}`);
}

async function throughput(jfast: Jfast): Promise<void> {
  const queue = jfast.require<QueueProvider>("queue");
  for (let i = 0; i < BACKLOG; i += 500) {
    await queue.enqueue(Array.from({ length: Math.min(500, BACKLOG - i) }, () => new Job({ task: "bench.noop" })));
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

async function dropTopology(): Promise<void> {
  const connection = await amqp.connect(URL);
  const channel = await connection.createChannel();
  for (const name of [QUEUE, `${QUEUE}.dead`, ...Array.from({ length: LEVELS }, (_, n) => `${QUEUE}.delay.${n}`)]) await channel.deleteQueue(name);
  for (let n = LEVELS - 1; n >= 0; n--) await channel.deleteExchange(`${QUEUE}.delay.${n}`);
  await connection.close();
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${cpus().length} CPU(s), load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; queue ${QUEUE}`);
  const root = await mkdtemp(path.join(tmpdir(), "jfast-bench-"));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "bench"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${URL}"\nname = "${QUEUE}"\nconcurrency = 10\n`,
  );
  const jfast = await createJfast({
    root,
    env: {},
    tasks: [ping, due, noop],
    logger: { debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  await jfast.start();
  try {
    const worker = jfast.createWorker({ concurrency: 10 });
    worker.start();
    await pickupLatency(jfast);
    await delayAccuracy(jfast);
    await worker.stop({ graceMs: 1000 });
    await throughput(jfast);
  } finally {
    await jfast.stop();
    await dropTopology();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
