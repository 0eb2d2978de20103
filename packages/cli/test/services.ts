import amqp from "amqplib";
import { Redis } from "ioredis";
import pg from "pg";

/** The machine's own services the CLI's tests run against (trust auth on PostgreSQL; a missing one fails the test). */
export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = "redis://127.0.0.1:6379";
export const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";
/** The delay levels a RabbitMQ queue declares by default. */
const LEVELS = 25;

/** One statement on a short-lived connection of its own: the rows. */
export async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** A service's jfast.toml with its database in `schema` and its jobs on the Redis queue `queue`, through the outbox. */
export function redisServiceToml(params: { schema: string; queue: string }): string {
  return [
    `[service]\nname = "svc"`,
    `[plugins]\nenabled = ["database", "queue", "outbox"]`,
    `[plugin.database]\nurl = "${PG_URL}"\nschema = "${params.schema}"`,
    `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${params.queue}"`,
    `[plugin.outbox]\npoll_interval = 30`,
  ].join("\n");
}

/** Deletes every Redis key of a test's queue (its name is in each key's hash tag). */
export async function dropRedisQueue(queue: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `*${queue}*`, "COUNT", 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/** Deletes a RabbitMQ queue, its dead letters and its delay cascade (queues and exchanges). */
export async function dropRabbitQueue(queue: string): Promise<void> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const name of [queue, `${queue}.dead`, ...Array.from({ length: LEVELS }, (_, n) => `${queue}.delay.${n}`)]) await channel.deleteQueue(name);
    // One at a time: RabbitMQ 3.10 can crash a channel deleting two exchanges bound to each other at once.
    for (let n = LEVELS - 1; n >= 0; n--) await channel.deleteExchange(`${queue}.delay.${n}`);
  } finally {
    await connection.close();
  }
}
