/**
 * The RabbitMQ ceiling: raw amqplib on a durable queue, persistent messages published on a confirm channel,
 * consumed with manual acks and a prefetch equal to the concurrency (the issue's reference setting), or with a
 * fixed prefetch (`prefetch`: the broker pushes that many ahead, as jfast's worker lets it with short jobs).
 * No job semantics at all.
 */
import amqp, { type Channel, type ChannelModel, type ConfirmChannel } from "amqplib";
import { probe, services, singleProcess, waitDone, type Subject, type SubjectContext } from "../lib/subject.js";
import { packageVersion } from "./package-version.js";

const version = packageVersion("amqplib");
const CONFIRM_WINDOW = 1000;

/** jfast's work queue is a priority queue with x-max-priority 9 (docs/rabbitmq.md); `priority` declares the same. */
const MAX_PRIORITY = 9;

export function amqplibSubject(options: { prefetch?: number; priority?: boolean } = {}, context: SubjectContext = singleProcess()): Subject {
  const queueName = `amqpbench.${context.namespace}`;
  let connection: ChannelModel;
  let publisher: ConfirmChannel;
  let idle: { channel: Channel } | null = null;
  const body = Buffer.from(JSON.stringify({ task: "bench.noop", payload: {} }));
  const publish = () =>
    publisher.sendToQueue(queueName, body, { persistent: true, contentType: "application/json", ...(options.priority ? { priority: MAX_PRIORITY } : {}) });
  const consume = async (prefetch: number) => {
    const channel = await connection.createChannel();
    await channel.prefetch(prefetch);
    await channel.consume(queueName, (message) => {
      if (!message) return;
      probe.hit();
      channel.ack(message);
    });
    return channel;
  };
  return {
    label: `amqplib ${version} (raw${options.prefetch ? `, prefetch ${options.prefetch}` : ""}${options.priority ? ", priority queue" : ""})`,
    settings: `durable classic queue${options.priority ? ` with x-max-priority ${MAX_PRIORITY} and a priority on every message, as jfast's work queue` : ""}, persistent messages, confirms awaited every ${CONFIRM_WINDOW}, manual ack, prefetch = ${options.prefetch ?? "concurrency"}`,
    async setup() {
      connection = await amqp.connect(services.amqp);
      publisher = await connection.createConfirmChannel();
      await publisher.assertQueue(queueName, { durable: true, ...(options.priority ? { arguments: { "x-max-priority": MAX_PRIORITY } } : {}) });
    },
    async enqueue(count) {
      for (let i = 0; i < count; i++) {
        publish();
        if ((i + 1) % CONFIRM_WINDOW === 0) await publisher.waitForConfirms();
      }
      await publisher.waitForConfirms();
    },
    async drain(count, concurrency) {
      const target = probe.done + count;
      const channel = await consume(options.prefetch ?? concurrency);
      await waitDone(target);
      await channel.close();
    },
    async startIdle() {
      idle = { channel: await consume(10) };
    },
    async enqueueOne() {
      publish();
      await publisher.waitForConfirms();
    },
    async stopIdle() {
      await idle?.channel.close();
      idle = null;
    },
    async teardown() {
      if (context.role !== "worker") await publisher?.deleteQueue(queueName);
      await connection?.close();
    },
  };
}
