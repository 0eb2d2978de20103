/** Leaves the shared services as the run found them. */
import amqp from "amqplib";
import { Redis } from "ioredis";
import { services } from "./subject.js";

export async function dropRedisKeys(pattern: string): Promise<void> {
  const redis = new Redis(services.redis);
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
