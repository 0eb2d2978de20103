/** jfast through its public API, on any of its three server backends. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { createJfast, Job, task, type Jfast, type AppWorker, type QueueProvider } from "@jfast/runtime";
import { dropJfastAmqpQueue, dropRedisKeys } from "../lib/cleanup.js";
import { pgSynchronousCommit, redisPersistence } from "../lib/server-settings.js";
import { probe, services, singleProcess, waitDone, type Subject, type SubjectContext } from "../lib/subject.js";

export type JfastBackend = "postgres" | "redis" | "rabbitmq";

const noop = task("bench.noop", async () => probe.hit());
/** The same no-op under limits that never bind (a cap of 1 000 and a million starts a second): what a limit costs. */
const limited = task("bench.limited", { concurrency: 1000, rateLimit: { max: 1_000_000, perMs: 1000 } }, async () => probe.hit());
const silent = { debug() {}, info() {}, warn() {}, error: console.error };
const CHUNK = 5000;

export interface JfastSubjectOptions {
  /**
   * `[plugin.queue] keep_completed = false`: completed jobs are deleted, as graphile-worker does and as BullMQ
   * does with removeOnComplete. The PostgreSQL default keeps them.
   */
  keepCompleted?: boolean;
  limited?: boolean;
  /** `[plugin.queue] durable_claims = true`: claims commit under the server's synchronous_commit too. */
  durableClaims?: boolean;
  /** Redis: another server than the shared one (a private one with persistence), and what the label adds for it. */
  redis?: { url: string; label: string };
}

export function jfastSubject(backend: JfastBackend, options: JfastSubjectOptions = {}, context: SubjectContext = singleProcess()): Subject {
  const keepCompleted = options.keepCompleted ?? true;
  const redisUrl = options.redis?.url ?? services.redis;
  /** The server's durability settings, read in setup for the settings line. */
  let durability = "";
  const taskName = options.limited ? "bench.limited" : "bench.noop";
  const id = context.namespace;
  /** The worker process of a separate-process run leaves the shared schema, keys or queue to the producer. */
  const owner = context.role !== "worker";
  const schema = `jfast_bench_${id}`;
  const queueName = `bench.${id}`;
  let root = "";
  let jfast: Jfast;
  let queue: QueueProvider;
  let idle: AppWorker | null = null;
  /**
   * A second instance on the same queue that only enqueues (PostgreSQL and Redis): its jobs are not handed over in
   * memory, as a job enqueued in the idle worker's own process is, but claimed through the store.
   */
  let elsewhere: Jfast | null = null;

  const toml = () => {
    const plugins = backend === "postgres" ? `"database", "queue"` : `"queue"`;
    const url = backend === "redis" ? redisUrl : backend === "rabbitmq" ? services.amqp : null;
    return [
      `[service]\nname = "bench"`,
      `[plugins]\nenabled = [${plugins}]`,
      backend === "postgres" ? `[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\npool_size = 12` : "",
      `[plugin.queue]\nbackend = "${backend}"\nname = "${queueName}"\nconcurrency = 10${url ? `\nurl = "${url}"` : ""}${keepCompleted ? "" : "\nkeep_completed = false"}${options.durableClaims ? "\ndurable_claims = true" : ""}`,
    ].join("\n");
  };

  return {
    label: [
      `jfast ${backend}`,
      keepCompleted && backend === "postgres" ? "completed kept" : "",
      options.limited ? "limited task" : "",
      options.durableClaims ? "synchronous_commit on" : "",
      options.redis?.label ?? "",
    ].filter(Boolean).join(", "),
    get settings() {
      return [
        keepCompleted ? "" : `keep_completed = false (completed jobs deleted, as ${backend === "redis" ? "BullMQ's removeOnComplete does" : "graphile-worker does"})`,
        backend === "postgres" ? "pool_size 12" : "",
        options.limited ? "the task has concurrency 1000 and rateLimit 1 000 000 per second (limits that never bind)" : "",
        durability,
        process.execArgv.some((arg) => arg.includes("register-fast-imports"))
          ? "started with --import @jfast/cli/dist/register-fast-imports.js (docs/deploy.md#start-up-on-node-22-and-later, what the jfast binary does itself)"
          : "",
        "defaults otherwise",
      ].filter(Boolean).join(", ");
    },
    async setup() {
      root = await mkdtemp(path.join(tmpdir(), "jfast-bench-"));
      await writeFile(path.join(root, "jfast.toml"), toml());
      jfast = await createJfast({ root, env: {}, tasks: options.limited ? [noop, limited] : [noop], logger: silent as never });
      await jfast.start();
      queue = jfast.require<QueueProvider>("queue");
      if (backend === "postgres") {
        const server = await pgSynchronousCommit(services.postgres);
        durability = options.durableClaims
          ? `durable_claims = true: claims commit under the server's synchronous_commit (${server}), as enqueues and completions do`
          : `claims commit with synchronous_commit off for their own transaction (the default), enqueues and completions under the server's (${server})`;
      }
      if (backend === "redis") durability = await redisPersistence(redisUrl);
      if (context.role === "both" && (backend === "postgres" || backend === "redis")) {
        elsewhere = await createJfast({ root, env: {}, tasks: options.limited ? [noop, limited] : [noop], logger: silent as never });
        await elsewhere.start();
      }
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await queue.enqueue(Array.from({ length: Math.min(CHUNK, count - i) }, () => new Job({ task: taskName })));
      }
    },
    async drain(count, concurrency) {
      const target = probe.done + count;
      const worker = jfast.createWorker({ concurrency });
      worker.start();
      await waitDone(target);
      await worker.stop({ graceMs: 1000 });
    },
    async startIdle() {
      idle = jfast.createWorker({ concurrency: 10 });
      idle.start();
    },
    enqueueOne: () => queue.enqueue(new Job({ task: taskName })),
    ...(context.role === "both" && (backend === "postgres" || backend === "redis")
      ? { enqueueOneElsewhere: () => elsewhere!.require<QueueProvider>("queue").enqueue(new Job({ task: taskName })) }
      : {}),
    async stopIdle() {
      await idle?.stop({ graceMs: 1000 });
      idle = null;
    },
    fillDead:
      backend === "postgres"
        ? async (count) => {
            const client = new pg.Client({ connectionString: services.postgres, options: `-c search_path=${schema}` });
            await client.connect();
            try {
              await client.query(
                `INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, died_at, errors)
                 SELECT 'dead-' || g, $2, 'bench.old', '{}', 'dead', 3, 3, now(), '[{"attempt":3,"class":"Error","message":"x"}]'
                 FROM generate_series(1, $1) g`,
                [count, queueName],
              );
              await client.query("ANALYZE jfast_jobs");
            } finally {
              await client.end();
            }
          }
        : undefined,
    async teardown() {
      await elsewhere?.stop();
      await jfast?.stop();
      if (owner && backend === "postgres") {
        const admin = new pg.Client({ connectionString: services.postgres });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      }
      if (owner && backend === "redis") await dropRedisKeys(`*{${queueName}}*`, redisUrl);
      if (owner && backend === "rabbitmq") await dropJfastAmqpQueue(queueName);
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}
