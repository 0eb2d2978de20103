import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { createRedisBackend, type RedisBackend, type RedisBackendOptions } from "../../src/backends/redis/redis-backend.js";
import { parseRedisUrl, type RedisClient } from "../../src/backends/redis/connection.js";
import { queueKeys } from "../../src/backends/redis/keys.js";

/** The real Redis these tests run against; a missing server fails the tests, it never skips them. */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Where a test's queue lives: the machine's Redis, or the loopback Redis Cluster (redis-cluster-env.ts). */
export interface RedisTarget {
  url: string;
  cluster: boolean;
}

export const STANDALONE: RedisTarget = { url: REDIS_URL, cluster: false };

/** A queue name no other test uses: its hash tag is the test's namespace. */
export function uniqueQueue(label: string): string {
  return `jfast-test.${label}.${randomUUID().slice(0, 8)}`;
}

export async function openBackend(queue: string, options: Partial<RedisBackendOptions> = {}, target: RedisTarget = STANDALONE): Promise<RedisBackend> {
  const backend = createRedisBackend({ url: target.url, ...(target.cluster ? { cluster: true } : {}), queue, ...options });
  await backend.setup();
  return backend;
}

/** A plain client for looking at (and tampering with) the queue's keys from the outside. */
export function rawClient(): Redis;
export function rawClient(target: RedisTarget): RedisClient;
export function rawClient(target: RedisTarget = STANDALONE): RedisClient {
  const client = target.cluster
    ? new Cluster(parseRedisUrl(target.url).nodes, {
        lazyConnect: true,
        redisOptions: { maxRetriesPerRequest: 20 },
        maxRedirections: 100,
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
      })
    : new Redis(target.url, { lazyConnect: true, maxRetriesPerRequest: 20, retryStrategy: (t) => Math.min(50 * t, 500) });
  client.on("error", () => undefined);
  return client;
}

/** Deletes every key of a queue (on a Cluster: on every primary, though the hash tag keeps them on one). */
export async function dropQueue(queue: string, prefix?: string, target: RedisTarget = STANDALONE): Promise<void> {
  const client = rawClient(target);
  try {
    const { pattern } = queueKeys({ queue, ...(prefix ? { prefix } : {}) });
    const nodes = client instanceof Cluster ? (await client.connect(), client.nodes("master")) : [client];
    for (const node of nodes) {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 500);
        for (const key of keys) await node.del(key);
        cursor = next;
      } while (cursor !== "0");
    }
  } finally {
    client.disconnect();
  }
}
