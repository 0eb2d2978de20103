/** Leaves the shared services as the run found them. */
import amqp from "amqplib";
import { Redis } from "ioredis";
import { services } from "./subject.js";

export async function dropRedisKeys(pattern: string, url = services.redis): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

export async function dropAmqpQueues(names: string[]): Promise<void> {
  const connection = await amqp.connect(services.amqp);
  try {
    const channel = await connection.createChannel();
    for (const name of names) await channel.deleteQueue(name);
    await channel.close();
  } finally {
    await connection.close();
  }
}

/** A jfast RabbitMQ queue: its work and dead queues and every level of its delay cascade (queue and exchange). */
export async function dropJfastAmqpQueue(queue: string, levels = 64, url = services.amqp): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    for (const name of [queue, `${queue}.dead`]) await channel.deleteQueue(name);
    for (let level = 0; level < levels; level++) {
      await channel.deleteQueue(`${queue}.delay.${level}`);
      await channel.deleteExchange(`${queue}.delay.${level}`);
    }
    await channel.close();
  } finally {
    await connection.close();
  }
}
