import type { Cluster, ClusterOptions, Redis, RedisOptions } from "ioredis";
import { importDriver } from "../../core/import-driver.js";

const ioredis = await importDriver("ioredis", () => import("ioredis"));

export type ConnectionRole = "commands" | "wait" | "wake" | "scheduler" | "alerts";

/** A connection to one Redis, or to a Redis Cluster through its seed nodes: the commands the backend sends are the same. */
export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  /** The seed nodes: every comma-separated entry of the url. */
  nodes: Array<{ host: string; port: number }>;
  /** Credentials, TLS and database, from the first entry that names them; every node gets the same. */
  options: Pick<RedisOptions, "username" | "password" | "tls" | "db">;
}

/**
 * Reads `redis://[user:password@]host:port[/db]` (rediss:// for TLS), or a comma-separated list of seed nodes for
 * Redis Cluster: `redis://h1:7001,redis://h2:7002` or `redis://h1:7001,h2:7002`. Credentials and TLS are given
 * once and apply to every node.
 */
export function parseRedisUrl(url: string): RedisTarget {
  const nodes: RedisTarget["nodes"] = [];
  const options: RedisTarget["options"] = {};
  let scheme = "redis:";
  for (const entry of url.split(",").map((part) => part.trim()).filter(Boolean)) {
    const parsed = new URL(/^[a-z]+:\/\//i.test(entry) ? entry : `${scheme}//${entry}`);
    scheme = parsed.protocol;
    nodes.push({ host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1", port: Number(parsed.port || 6379) });
    if (parsed.username && options.username === undefined) options.username = decodeURIComponent(parsed.username);
    if (parsed.password && options.password === undefined) options.password = decodeURIComponent(parsed.password);
    if (parsed.protocol === "rediss:") options.tls = {};
    const db = parsed.pathname.replace(/^\//, "");
    if (db && options.db === undefined) options.db = Number(db);
  }
  if (nodes.length === 0) throw new TypeError("a Redis url names no node");
  return { nodes, options };
}

/**
 * One ioredis connection of the backend: commands, a blocking wait, or the wake-up subscription. The name
 * (`jfast:<queue>:<role>`) shows in CLIENT LIST, so an operator can tell the connections of a queue apart.
 * With `cluster`, a Cluster client: it learns which node serves each slot, follows MOVED/ASK redirections and,
 * when a primary fails, retries on the replica that takes over.
 */
export function openConnection(params: {
  url: string;
  cluster?: boolean;
  queue: string;
  role: ConnectionRole;
  onError: (error: Error) => void;
  /** Reconnect attempts a command waits through before it fails; default 20 (about 15 s). */
  maxRetriesPerRequest?: number;
}): RedisClient {
  const connectionName = `jfast:${params.queue}:${params.role}`;
  const retries = params.maxRetriesPerRequest ?? 20;
  const connection = params.cluster
    ? openCluster(params.url, connectionName, retries)
    : new ioredis.Redis(params.url, { ...nodeOptions(connectionName), maxRetriesPerRequest: retries });
  // Connection errors surface on the commands that hit them; without a listener ioredis prints each one.
  connection.on("error", params.onError);
  return connection;
}

/** A plain connection to one node of a cluster (the blocking wait must reach the node serving the queue's slot). */
export function openNodeConnection(params: { url: string; node: { host: string; port: number }; queue: string; onError: (error: Error) => void }): Redis {
  const { options } = parseRedisUrl(params.url);
  const connection = new ioredis.Redis({ ...nodeOptions(`jfast:${params.queue}:wait`), ...options, db: 0, host: params.node.host, port: params.node.port });
  connection.on("error", params.onError);
  return connection;
}

function nodeOptions(connectionName: string): RedisOptions {
  return {
    lazyConnect: true,
    connectionName,
    // Reconnect quickly at first, then once a second, for as long as it takes (a Redis restart, a failover).
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1000),
    // A command issued while disconnected waits in the offline queue for about 15 s of reconnect attempts,
    // then fails as BACKEND_UNAVAILABLE; the worker backs off and claims again.
    maxRetriesPerRequest: 20,
    // Commands sent but unanswered when the connection dropped are sent again after reconnecting. Every
    // script is safe to run twice: each acts only on a job in the state it expects, owned by that worker.
    autoResendUnfulfilledCommands: true,
  };
}

function openCluster(url: string, connectionName: string, maxRetriesPerRequest: number): Cluster {
  const { nodes, options } = parseRedisUrl(url);
  // Redis Cluster has no databases: a /db in the url is ignored.
  const { db: _db, ...credentials } = options;
  const clusterOptions: ClusterOptions = {
    lazyConnect: true,
    redisOptions: { connectionName, maxRetriesPerRequest, autoResendUnfulfilledCommands: true, ...credentials },
    // While a failed primary's replica is being promoted (cluster-node-timeout plus an election, seconds) the
    // slot answers CLUSTERDOWN or its node refuses connections; commands wait and retry for up to ~20 s.
    maxRedirections: 100,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    // Every seed unreachable: keep trying, like the single-node connection.
    clusterRetryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1000),
  };
  return new ioredis.Cluster(nodes, clusterOptions);
}

/**
 * Connects, waiting through a short outage (Redis restarting while this process starts) until `deadline`.
 * Throws the last socket error (ECONNREFUSED, ENOTFOUND...) rather than ioredis' generic "Connection is closed".
 */
export async function waitUntilReady(redis: RedisClient, params: { deadline: number; lastError: () => Error | null }): Promise<void> {
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
