/**
 * Malformed work written straight into each backend, past jfast's enqueue, the way a foreign producer or a
 * damaged record would arrive. Unknown tasks go through the public enqueue (a valid job nobody handles).
 * The key and queue layouts used here are the backends' documented ones (docs/redis.md, docs/rabbitmq.md).
 */
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { Redis } from "ioredis";
import type { ChaosBackend } from "./service.js";
import { rabbitmqClusterFirstUrl } from "./rabbitmq-cluster.js";

export interface Injected {
  /** What was written, as it appears in RELIABILITY.md. */
  kind: string;
  id: string | null;
}

export async function injectMalformed(backend: ChaosBackend, queue: string, url: string): Promise<Injected[]> {
  if (backend === "redis") {
    const redis = new Redis(url);
    try {
      const stem = `{${queue}}`;
      const damaged = randomUUID();
      const taskless = randomUUID();
      // A job hash whose JSON is broken, one whose JSON lacks the task, and a raw JSON document pushed
      // where an id belongs (a naive producer).
      await redis.hset(`${stem}:job:${damaged}`, { json: "{not json", attempts: "0", state: "ready", max_attempts: "3" });
      await redis.hset(`${stem}:job:${taskless}`, { json: JSON.stringify({ id: taskless, payload: {} }), attempts: "0", state: "ready", max_attempts: "3" });
      const foreign = JSON.stringify({ task: "chaos.effect", payload: { n: -1 } });
      await redis.lpush(`${stem}:ready`, damaged, taskless, foreign);
      return [
        { kind: "bad JSON in the job record", id: damaged },
        { kind: "job record without a task", id: taskless },
        { kind: "raw JSON pushed instead of an id", id: foreign },
      ];
    } finally {
      redis.disconnect();
    }
  }
  if (backend === "rabbitmq" || backend === "rabbitmq-cluster") {
    const connection = await amqp.connect(backend === "rabbitmq" ? url : rabbitmqClusterFirstUrl());
    try {
      const channel = await connection.createConfirmChannel();
      channel.sendToQueue(queue, Buffer.from("{not json"), { persistent: true });
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ payload: { n: -1 } })), { persistent: true, contentType: "application/json" });
      channel.sendToQueue(queue, Buffer.from(JSON.stringify([1, 2])), { persistent: true, contentType: "application/json" });
      await channel.waitForConfirms();
      await channel.close();
      return [
        { kind: "bad JSON body", id: null },
        { kind: "JSON body without id and task", id: null },
        { kind: "JSON body that is not an object", id: null },
      ];
    } finally {
      await connection.close();
    }
  }
  // PostgreSQL: id, task and payload are NOT NULL jsonb/text columns, so a row cannot be unreadable; only the
  // unknown task (below, common to all backends) applies.
  return [];
}
