import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { createRabbitMqBackend, type RabbitMqBackend, type RabbitMqBackendOptions } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { queueNames } from "../../src/backends/rabbitmq/names.js";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createLogger } from "../../src/observability/logger.js";
import { Worker } from "../../src/worker/worker.js";

/** The broker every RabbitMQ test talks to. A missing broker fails the test (setup cannot connect). */
export const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";

/** A queue name no other test uses, so test files run in parallel on one broker. */
export function uniqueQueue(label: string): string {
  return `jfast-test.${label}.${randomUUID().slice(0, 8)}`;
}

/** Opens a backend on the shared broker, or on `options.url` (the loopback cluster: rabbitmq-cluster-env.ts). */
export async function openBackend(queue: string, options: Partial<RabbitMqBackendOptions> = {}): Promise<RabbitMqBackend> {
  const backend = createRabbitMqBackend({ url: AMQP_URL, queue, connectTimeoutMs: 5000, ...options });
  try {
    await backend.setup();
  } catch (error) {
    await backend.close();
    throw error;
  }
  return backend;
}

/** Runs `use` on a plain amqplib channel (for inspecting the broker or publishing by hand). */
export async function withRawChannel<T>(use: (channel: amqp.Channel) => Promise<T>, url = AMQP_URL): Promise<T> {
  const connection = await amqp.connect(firstNode(url));
  connection.on("error", () => undefined);
  try {
    const channel = await connection.createChannel();
    channel.on("error", () => undefined);
    return await use(channel);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * Deletes every queue and exchange a test queue declared. Queues go side by side on several channels (durable
 * deletes are slow); exchanges one at a time, top level first, because RabbitMQ 3.10 can crash a channel when
 * two exchanges bound to each other are deleted at the same moment.
 */
export async function dropQueue(queue: string, levels = 25, url = AMQP_URL): Promise<void> {
  const names = queueNames(queue, levels);
  const connection = await amqp.connect(firstNode(url));
  connection.on("error", () => undefined);
  try {
    const channels = await Promise.all(Array.from({ length: 8 }, () => connection.createChannel()));
    const work: Array<(channel: amqp.Channel) => Promise<unknown>> = [
      (c) => c.deleteQueue(names.work),
      (c) => c.deleteQueue(names.dead),
      ...Array.from({ length: levels }, (_, level) => (c: amqp.Channel) => c.deleteQueue(names.delayLevel(level))),
    ];
    await Promise.all(
      channels.map(async (channel, index) => {
        for (let i = index; i < work.length; i += channels.length) await work[i]!(channel);
      }),
    );
    for (let level = levels - 1; level >= 0; level--) await channels[0]!.deleteExchange(names.delayLevel(level));
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** The first node of a comma-separated list of AMQP URLs (a cluster's): any node serves every queue. */
function firstNode(url: string): string {
  return url.split(",")[0]!.trim();
}

/** A Worker on `backend` running `tasks`, as `jfast worker` builds one (silent logger). */
export function startWorker(
  backend: QueueBackend,
  tasks: TaskDefinition[],
  options: { concurrency?: number; leaseMs?: number; backoffBaseMs?: number; workerId?: string; prefetch?: number } = {},
): Worker {
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const worker = new Worker({
    backend,
    lookup: (name) => byName.get(name),
    execute: (definition, job, cancellation) =>
      Promise.resolve(definition.handler(job.payload, { ctx: { serviceName: "rabbitmq-test", require: () => undefined as never }, job, session: undefined, signal: cancellation.signal, locals: {}, progress: () => undefined, log: { info() {}, warn() {}, error() {} } })),
    logger: createLogger({ service: "rabbitmq-test", level: "silent" }),
    concurrency: options.concurrency ?? 4,
    leaseMs: options.leaseMs ?? 30_000,
    backoffBaseMs: options.backoffBaseMs ?? 50,
    pollIntervalMs: 5000,
    defaultMaxAttempts: 3,
    ...(options.workerId ? { workerId: options.workerId } : {}),
    ...(options.prefetch !== undefined ? { prefetch: options.prefetch } : {}),
  });
  worker.start();
  return worker;
}

/**
 * Claims (and completes) until `count` jobs arrived, waiting on the backend's wake-ups between claims (no
 * polling). Returns each job with the time it was handed out.
 */
export async function collectArrivals(backend: QueueBackend, count: number, timeoutMs = 30_000): Promise<Array<{ job: Job; at: number }>> {
  const arrivals: Array<{ job: Job; at: number }> = [];
  const deadline = Date.now() + timeoutMs;
  while (arrivals.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${arrivals.length} of ${count} jobs arrived within ${timeoutMs} ms`);
    const claimed = await backend.claim({ workerId: "arrivals", limit: 10, leaseMs: 30_000 });
    const at = Date.now();
    for (const job of claimed) {
      arrivals.push({ job, at });
      await backend.complete({ workerId: "arrivals", job });
    }
    if (claimed.length === 0) await backend.waitForWork({ signal: new AbortController().signal, timeoutMs: 1000 });
  }
  return arrivals;
}
