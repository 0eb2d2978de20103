import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createRedisBackend, type RedisBackend, type RedisBackendOptions } from "../../src/backends/redis/redis-backend.js";
import { queueKeys } from "../../src/backends/redis/keys.js";

/** The real Redis these tests run against; a missing server fails the tests, it never skips them. */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A queue name no other test uses: its hash tag is the test's namespace. */
export function uniqueQueue(label: string): string {
  return `jfast-test.${label}.${randomUUID().slice(0, 8)}`;
}

export async function openBackend(queue: string, options: Partial<RedisBackendOptions> = {}): Promise<RedisBackend> {
  const backend = createRedisBackend({ url: REDIS_URL, queue, ...options });
  await backend.setup();
  return backend;
}

/** A plain client for looking at (and tampering with) the queue's keys from the outside. */
export function rawClient(): Redis {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 20, retryStrategy: (t) => Math.min(50 * t, 500) });
  client.on("error", () => undefined);
  return client;
}

/** Deletes every key of a queue. */
export async function dropQueue(queue: string, prefix?: string): Promise<void> {
  const client = rawClient();
  try {
    const { pattern } = queueKeys({ queue, ...(prefix ? { prefix } : {}) });
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", pattern, "COUNT", 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}
