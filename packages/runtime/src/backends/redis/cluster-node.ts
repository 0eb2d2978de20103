import type { Cluster, Redis } from "ioredis";
import { openNodeConnection, parseRedisUrl, type RedisClient } from "./connection.js";
import type { RedisBackendOptions } from "./options.js";

/** Cluster: "host:port" of the primary serving `slot`, as the client last learnt it ("" until known). */
export function slotNode(cluster: Cluster, slot: number): string {
  return cluster.slots[slot]?.[0] ?? "";
}

/**
 * Cluster: a plain connection to the primary serving the queue's slot (`known`, from slotNode), for the blocking
 * wait (ready-waiter.ts). Before the client knows the slot's node, the first seed: a wrong node answers MOVED and
 * the worker waits again.
 */
export function connectToSlotNode(known: string, options: Pick<RedisBackendOptions, "url" | "queue">): Redis {
  const node = known ? splitNodeKey(known) : parseRedisUrl(options.url).nodes[0]!;
  return openNodeConnection({ url: options.url, node, queue: options.queue, onError: () => undefined });
}

/** CLIENT UNBLOCK on the node the blocked connection is connected to (standalone: the only one). */
export async function unblock({ redis, cluster, clientId, blocked }: { redis: RedisClient; cluster: boolean; clientId: number; blocked: Redis }): Promise<unknown> {
  if (!cluster) return (redis as Redis).client("UNBLOCK", clientId);
  const target = `${blocked.options.host}:${blocked.options.port}`;
  const node = (redis as Cluster).nodes("master").find((n) => `${n.options.host}:${n.options.port}` === target);
  return node?.client("UNBLOCK", clientId);
}

/** ioredis names a Cluster node "host:port" (the host may be an IPv6 address with colons of its own). */
function splitNodeKey(key: string): { host: string; port: number } {
  const colon = key.lastIndexOf(":");
  return { host: key.slice(0, colon), port: Number(key.slice(colon + 1)) };
}
