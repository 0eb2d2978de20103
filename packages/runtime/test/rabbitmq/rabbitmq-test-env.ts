import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { createRabbitMqBackend, type RabbitMqBackend, type RabbitMqBackendOptions } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { queueNames } from "../../src/backends/rabbitmq/names.js";

/** The broker every RabbitMQ test talks to. A missing broker fails the test (setup cannot connect). */
export const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";

/** A queue name no other test uses, so test files run in parallel on one broker. */
export function uniqueQueue(label: string): string {
  return `jfast-test.${label}.${randomUUID().slice(0, 8)}`;
}

export async function openBackend(queue: string, options: Partial<RabbitMqBackendOptions> = {}): Promise<RabbitMqBackend> {
  const backend = createRabbitMqBackend({ url: AMQP_URL, queue, connectTimeoutMs: 5000, ...options });
  await backend.setup();
  return backend;
}

/** Runs `use` on a plain amqplib channel (for inspecting the broker or publishing by hand). */
export async function withRawChannel<T>(use: (channel: amqp.Channel) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(AMQP_URL);
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
export async function dropQueue(queue: string, levels = 25): Promise<void> {
  const names = queueNames(queue, levels);
  const connection = await amqp.connect(AMQP_URL);
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
