/**
 * Kafka events through the runtime's public API, on a real broker (docker/kafka/start.sh):
 *   1. publish throughput: EVENTS events in publish calls of BATCH, keyed over KEYS aggregates, events/s;
 *   2. consume throughput: a second service (its own consumer group) started after the publishing, draining
 *      the backlog through its `on` handler, from start() returning until the last handler call, events/s;
 *   3. end-to-end latency of single publishes (publish → handler), p50/p99, one event at a time.
 *
 *   npx tsx bench/kafka-events.ts              (KAFKA_BROKERS, default 127.0.0.1:9092)
 *   EVENTS=50000 BATCH=500 npx tsx bench/kafka-events.ts
 *
 * Each run uses its own topic and groups. Timings are of this machine at this moment (load average printed):
 * read them as orders of magnitude, and compare runs on the same machine only.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createJfast, createLogger, Event, on, type EventsBus, type Jfast } from "../packages/runtime/src/index.js";
import { percentile } from "./lib/stats.js";

const BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:9092";
const EVENTS = Number(process.env.EVENTS ?? 20_000);
const BATCH = Number(process.env.BATCH ?? 200);
const KEYS = Number(process.env.KEYS ?? 100);
const SINGLES = Number(process.env.SINGLES ?? 200);
const TOPIC = `bench.orders.${randomBytes(4).toString("hex")}`;

let received = 0;
let lastAt = 0;
let single: ((at: number) => void) | null = null;
const handler = on(TOPIC, (event) => {
  received++;
  lastAt = performance.now();
  if ((event.data as { single?: boolean }).single) single?.(lastAt);
});

async function service(name: string, handlers: ReturnType<typeof on>[]): Promise<{ jfast: Jfast; root: string }> {
  const root = await mkdtemp(path.join(tmpdir(), `jfast-bench-${name}-`));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "${name}"\n\n[plugins]\nenabled = ["kafka"]\n\n[plugin.kafka]\nconsumer_group = "${name}-${randomBytes(3).toString("hex")}"\n`,
  );
  const jfast = await createJfast({
    root,
    env: { KAFKA_BROKERS: BROKERS },
    handlers,
    logger: createLogger({ service: name, level: "warn" }),
  });
  await jfast.start();
  return { jfast, root };
}


const billing = await service("billing", []);
const events = billing.jfast.require<EventsBus>("events");
let shipping: { jfast: Jfast; root: string } | null = null;
try {
  // Warm-up: connections, metadata, topic creation.
  await events.publish(TOPIC, new Event({ type: "order.placed", data: { warm: true }, key: "warm" }));

  const start = performance.now();
  for (let sent = 0; sent < EVENTS; sent += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, EVENTS - sent) }, (_, i) => {
      const n = sent + i;
      return new Event({ type: "order.updated", data: { n }, key: `order-${n % KEYS}` });
    });
    await events.publish(TOPIC, batch);
  }
  const published = performance.now();

  shipping = await service("shipping", [handler]);
  const consuming = performance.now();
  while (received < EVENTS + 1) await new Promise((r) => setTimeout(r, 5));
  const consumedMs = lastAt - consuming;

  const latencies: number[] = [];
  for (let i = 0; i < SINGLES; i++) {
    const handled = new Promise<number>((resolve) => (single = resolve));
    const t0 = performance.now();
    await events.publish(TOPIC, new Event({ type: "order.updated", data: { single: true }, key: `order-${i % KEYS}` }));
    latencies.push((await handled) - t0);
  }
  latencies.sort((a, b) => a - b);

  const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Number(l.toFixed(2))) },
        brokers: BROKERS,
        events: EVENTS,
        batch: BATCH,
        keys: KEYS,
        publish_events_per_s: rate(EVENTS, published - start),
        consume_events_per_s: rate(EVENTS + 1, consumedMs),
        single_publish_to_handler_ms: { p50: Number(percentile(latencies, 50).toFixed(1)), p99: Number(percentile(latencies, 99).toFixed(1)) },
      },
      null,
      2,
    ),
  );
} finally {
  await billing.jfast.stop();
  await shipping?.jfast.stop();
  await rm(billing.root, { recursive: true, force: true });
  if (shipping) await rm(shipping.root, { recursive: true, force: true });
}
