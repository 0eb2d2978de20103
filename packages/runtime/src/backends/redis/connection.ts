import type { Redis, RedisOptions } from "ioredis";
import { importDriver } from "../../core/import-driver.js";

const { Redis: RedisClient } = await importDriver("ioredis", () => import("ioredis"));

export type ConnectionRole = "commands" | "wait" | "wake";

/**
 * One ioredis connection of the backend: commands, a blocking wait, or the wake-up subscription. The name
 * (`jfast:<queue>:<role>`) shows in CLIENT LIST, so an operator can tell the connections of a queue apart.
 */
export function openConnection(params: { url: string; queue: string; role: ConnectionRole; onError: (error: Error) => void }): Redis {
  const options: RedisOptions = {
    lazyConnect: true,
    connectionName: `jfast:${params.queue}:${params.role}`,
    // Reconnect quickly at first, then once a second, for as long as it takes (a Redis restart, a failover).
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1000),
    // A command issued while disconnected waits in the offline queue for about 15 s of reconnect attempts,
    // then fails as BACKEND_UNAVAILABLE; the worker backs off and claims again.
    maxRetriesPerRequest: 20,
    // Commands sent but unanswered when the connection dropped are sent again after reconnecting. Every
    // script is safe to run twice: each acts only on a job in the state it expects, owned by that worker.
    autoResendUnfulfilledCommands: true,
  };
  const connection = new RedisClient(params.url, options);
  // Connection errors surface on the commands that hit them; without a listener ioredis prints each one.
  connection.on("error", params.onError);
  return connection;
}

/**
 * Connects, waiting through a short outage (Redis restarting while this process starts) until `deadline`.
 * Throws the last socket error (ECONNREFUSED, ENOTFOUND...) rather than ioredis' generic "Connection is closed".
 */
export async function waitUntilReady(redis: Redis, params: { deadline: number; lastError: () => Error | null }): Promise<void> {
  if (redis.status === "ready") return;
  const ready = new Promise<void>((resolve) => redis.once("ready", () => resolve()));
  if (redis.status === "wait") {
    // A failed first attempt is retried by the client's retryStrategy; keep waiting for "ready" below.
    await redis.connect().catch(() => undefined);
  }
  if ((redis.status as string) === "ready") return;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"expired">((resolve) => (timer = setTimeout(() => resolve("expired"), Math.max(0, params.deadline - Date.now()))));
  const outcome = await Promise.race([ready, expired]);
  clearTimeout(timer);
  if (outcome === "expired") throw params.lastError() ?? new Error("Connection is closed.");
}
