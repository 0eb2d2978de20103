/**
 * The four queues of the backlog benchmark, each at the settings of its row in BENCHMARKS.md (bench/subjects/):
 * jfast on PostgreSQL and on Redis with keep_completed = false, graphile-worker 0.18 with a local queue and
 * batched completions, BullMQ with removeOnComplete. Each has two queues (or task kinds) in one store: the backlog
 * of no-op jobs, and "fresh", a second queue an idle worker waits on while the backlog sits in the same table or
 * Redis. The producer process calls setup, enqueue, enqueueFresh and teardown; the worker process setup,
 * startDrain, startFresh and stop. Every run has a namespace of its own (schema, key prefix, queue names).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from "graphile-worker";
import { createJfast, Job, task, type AppWorker, type Jfast, type QueueProvider } from "@jfast/runtime";
import { dropRedisKeys } from "../lib/cleanup.js";
import { services } from "../lib/subject.js";
import { packageVersion } from "../subjects/package-version.js";

export type AdapterName = "jfast-postgres" | "jfast-redis" | "graphile-worker" | "bullmq";
export const ADAPTERS: AdapterName[] = ["jfast-postgres", "graphile-worker", "jfast-redis", "bullmq"];

export interface Hits {
  /** A backlog job's handler ran. */
  noop(): void;
  /** A fresh job's handler started. */
  fresh(): void;
}

export interface Adapter {
  readonly label: string;
  readonly settings: string;
  readonly store: "postgres" | "redis";
  setup(): Promise<void>;
  /** Enqueues `count` backlog jobs in bulk calls of 5 000. */
  enqueue(count: number): Promise<void>;
  enqueueFresh(): Promise<unknown>;
  /** A worker at `concurrency` on the backlog. */
  startDrain(concurrency: number): Promise<void>;
  /** An idle worker (concurrency 10) on the fresh queue. */
  startFresh(): Promise<void>;
  stopFresh(): Promise<void>;
  stop(): Promise<void>;
  /** jfast only: a jfast.toml for a service on the same queue (the dashboard's admin API reads it). */
  serviceToml?(): string;
  /** Bytes the backlog takes in the store: the table with its indexes, or Redis' used_memory. */
  storeBytes(): Promise<number>;
  /** The producer drops what the run made. */
  teardown(): Promise<void>;
}

const CHUNK = 5000;
const silent = { debug() {}, info() {}, warn() {}, error: console.error };

async function pgQuery<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: services.postgres });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function redisUsedMemory(): Promise<number> {
  const redis = new Redis(services.redis);
  try {
    const info = await redis.info("memory");
    return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0);
  } finally {
    redis.disconnect();
  }
}

export function makeAdapter(name: AdapterName, namespace: string, hits: Hits): Adapter {
  if (name === "jfast-postgres" || name === "jfast-redis") return jfastAdapter(name === "jfast-postgres" ? "postgres" : "redis", namespace, hits);
  if (name === "graphile-worker") return graphileAdapter(namespace, hits);
  return bullmqAdapter(namespace, hits);
}

function jfastAdapter(backend: "postgres" | "redis", namespace: string, hits: Hits): Adapter {
  const schema = `jfast_backlog_${namespace}`;
  const queueName = `backlog.${namespace}`;
  const freshName = `backlog.${namespace}.fresh`;
  const tasks = [task("backlog.noop", async () => hits.noop()), task("backlog.fresh", async () => hits.fresh())];
  const toml = (queue: string) =>
    [
      `[service]\nname = "backlog"`,
      `[plugins]\nenabled = [${backend === "postgres" ? `"database", "queue"` : `"queue"`}]`,
      backend === "postgres" ? `[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\npool_size = 12` : "",
      `[plugin.queue]\nbackend = "${backend}"\nname = "${queue}"\nconcurrency = 10\nkeep_completed = false${backend === "redis" ? `\nurl = "${services.redis}"` : ""}`,
    ].join("\n\n");
  const roots: string[] = [];
  let main: Jfast;
  let fresh: Jfast;
  let drain: AppWorker | null = null;
  let idle: AppWorker | null = null;
  const open = async (queue: string) => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-backlog-"));
    roots.push(root);
    await writeFile(path.join(root, "jfast.toml"), toml(queue));
    const jfast = await createJfast({ root, env: {}, tasks, logger: silent as never });
    await jfast.start();
    return jfast;
  };
  return {
    label: `jfast ${backend}`,
    settings: `keep_completed = false, worker concurrency 10, ${backend === "postgres" ? "pool_size 12, " : ""}bulk enqueue of 5 000 per call, defaults otherwise`,
    store: backend,
    async setup() {
      main = await open(queueName);
      fresh = await open(freshName);
    },
    async enqueue(count) {
      const queue = main.require<QueueProvider>("queue");
      for (let i = 0; i < count; i += CHUNK) {
        await queue.enqueue(Array.from({ length: Math.min(CHUNK, count - i) }, () => new Job({ task: "backlog.noop" })));
      }
    },
    enqueueFresh: () => fresh.require<QueueProvider>("queue").enqueue(new Job({ task: "backlog.fresh" })),
    async startDrain(concurrency) {
      drain = main.createWorker({ concurrency });
      drain.start();
    },
    async startFresh() {
      idle = fresh.createWorker({ concurrency: 10 });
      idle.start();
    },
    async stopFresh() {
      await idle?.stop({ graceMs: 1000 });
      idle = null;
    },
    async stop() {
      await drain?.stop({ graceMs: 1000 });
      await idle?.stop({ graceMs: 1000 });
      await fresh?.stop();
      await main?.stop();
      for (const root of roots) await rm(root, { recursive: true, force: true });
    },
    serviceToml: () => toml(queueName),
    async storeBytes() {
      if (backend === "redis") return redisUsedMemory();
      const [row] = await pgQuery<{ bytes: string }>(`SELECT pg_total_relation_size('"${schema}".jfast_jobs') AS bytes`);
      return Number(row!.bytes);
    },
    async teardown() {
      if (backend === "postgres") await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      else await dropRedisKeys(`*backlog.${namespace}*`);
    },
  };
}

function graphileAdapter(namespace: string, hits: Hits): Adapter {
  const schema = `gw_backlog_${namespace}`;
  let utils: WorkerUtils;
  let drain: Runner | null = null;
  let idle: Runner | null = null;
  const quietLogger = new Logger(() => (level, message) => {
    if (level === "error") console.error(message);
  });
  const start = (concurrency: number, taskList: Record<string, () => Promise<void>>) =>
    run({
      connectionString: services.postgres,
      concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      logger: quietLogger,
      taskList,
      preset: { worker: { schema, localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0, maxPoolSize: 12 } },
    });
  return {
    label: `graphile-worker ${packageVersion("graphile-worker")}`,
    settings: "localQueue.size 500, completeJobBatchDelay 0 (batched completions), LISTEN/NOTIFY, maxPoolSize 12, concurrency 10, addJobs of 5 000 per call; the fresh jobs are a second task identifier the idle runner alone knows",
    store: "postgres",
    async setup() {
      utils = await makeWorkerUtils({ connectionString: services.postgres, schema });
      await utils.migrate();
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await utils.addJobs(Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ identifier: "noop", payload: {} })));
      }
    },
    enqueueFresh: () => utils.addJob("fresh", {}),
    async startDrain(concurrency) {
      drain = await start(concurrency, { noop: async () => hits.noop() });
    },
    async startFresh() {
      idle = await start(10, { fresh: async () => hits.fresh() });
    },
    async stopFresh() {
      await idle?.stop();
      idle = null;
    },
    async stop() {
      await drain?.stop();
      await idle?.stop();
      await utils?.release();
    },
    async storeBytes() {
      const [row] = await pgQuery<{ bytes: string }>(`SELECT pg_total_relation_size('"${schema}"._private_jobs') AS bytes`);
      return Number(row!.bytes);
    },
    async teardown() {
      await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

function bullmqAdapter(namespace: string, hits: Hits): Adapter {
  const prefix = `bullbacklog${namespace}`;
  const jobOptions = { removeOnComplete: true, removeOnFail: true };
  const connection = () => new Redis(services.redis, { maxRetriesPerRequest: null });
  let queue: Queue;
  let freshQueue: Queue;
  const workers: Worker[] = [];
  let idle: Worker | null = null;
  const worker = async (name: string, concurrency: number, handler: () => void) => {
    const w = new Worker(name, async () => handler(), { connection: connection(), prefix, concurrency, removeOnComplete: { count: 0 } });
    await w.waitUntilReady();
    return w;
  };
  return {
    label: `BullMQ ${packageVersion("bullmq")}`,
    settings: "removeOnComplete, addBulk of 5 000 per call, one Worker at concurrency 10, the Queue on a connection of its own; the fresh jobs are a second queue on the same prefix",
    store: "redis",
    async setup() {
      queue = new Queue("noop", { connection: connection(), prefix });
      freshQueue = new Queue("fresh", { connection: connection(), prefix });
      await queue.waitUntilReady();
      await freshQueue.waitUntilReady();
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await queue.addBulk(Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ name: "noop", data: {}, opts: jobOptions })));
      }
    },
    enqueueFresh: () => freshQueue.add("fresh", {}, jobOptions),
    async startDrain(concurrency) {
      workers.push(await worker("noop", concurrency, hits.noop));
    },
    async startFresh() {
      idle = await worker("fresh", 10, hits.fresh);
    },
    async stopFresh() {
      await idle?.close();
      idle = null;
    },
    async stop() {
      for (const w of workers) await w.close();
      await idle?.close();
      await queue?.close();
      await freshQueue?.close();
    },
    storeBytes: redisUsedMemory,
    async teardown() {
      await dropRedisKeys(`${prefix}:*`);
    },
  };
}
