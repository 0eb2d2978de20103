import { z } from "zod";
import { memoryQueue, type MemoryQueueConfig } from "../backends/memory/config.js";
import { postgresQueue, type PostgresQueueConfig } from "../backends/postgres/config.js";
import { rabbitMqQueue, type RabbitMqQueueConfig } from "../backends/rabbitmq/config.js";
import { redisQueue, type RedisQueueConfig } from "../backends/redis/config.js";
import { MAX_CONCURRENCY } from "../core/concurrency.js";
import { backendQueueName, DEFAULT_QUEUE, QUEUE_NAME_PATTERN } from "../core/named-queue.js";
import { DEFAULT_MAX_RESULT_BYTES } from "../core/result.js";
import { DEFAULT_JOB_LOG_LINES } from "../core/job-life.js";
import type { RetainedState, Retention } from "../core/retention.js";
import { ConfigError } from "../errors/jfast-error.js";
import { keepsCompleted, resolvePruneInterval, resolveRetention, retentionSchema } from "./retention-config.js";

/** Each backend's `[plugin.queue]` keys, resolution and options, in backends/<name>/config.ts. */
export const QUEUE_BACKEND_CONFIGS = { postgres: postgresQueue, redis: redisQueue, rabbitmq: rabbitMqQueue, memory: memoryQueue } as const;
export type QueueBackendName = keyof typeof QUEUE_BACKEND_CONFIGS;
export const QUEUE_BACKENDS = Object.keys(QUEUE_BACKEND_CONFIGS) as QueueBackendName[];

const seconds = z.number().positive();

/** `[plugin.queue]` keys every backend reads. */
const commonKeys = {
  /** The broker's address (Redis, RabbitMQ); REDIS_URL or AMQP_URL win over it. */
  url: z.string().optional(),
  name: z.string().regex(/^[a-zA-Z0-9_.-]+$/).default("jfast.jobs"),
  max_attempts: z.number().int().min(1).default(3),
  visibility_timeout: seconds.default(60),
  backoff_base: seconds.default(1),
  poll_interval: seconds.default(5),
  concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).default(4),
  expose_stats: z.boolean().default(false),
  scheduler: z.boolean().default(false),
  /** Largest payload (JSON, in bytes) enqueue accepts; brokers and rows are not the place for files. */
  max_payload_bytes: z.number().int().min(1).default(1024 * 1024),
  /** Jobs a worker claims ahead of its free slots (PostgreSQL, Redis); unset: sized to the work, up to 1000. */
  prefetch: z.number().int().min(0).max(10_000).optional(),
  /** Retention of completed jobs; false deletes them on completion (docs/queues.md#retention). */
  keep_completed: retentionSchema.default(true),
  keep_dead: retentionSchema.default(true),
  keep_cancelled: retentionSchema.default(true),
  /** How often the pruner runs: a duration such as "1m", or seconds. */
  prune_interval: z.union([z.string(), seconds]).default("1m"),
  /** How many times one job may snooze (`return snooze(ms)`) before it is dead-lettered. */
  max_snoozes: z.number().int().min(0).default(100),
  /** Largest handler result (JSON, in bytes) stored with its job; a larger one is not stored (docs/tasks.md#results). */
  max_result_bytes: z.number().int().min(1).default(DEFAULT_MAX_RESULT_BYTES),
  /** `tools.log` lines kept per attempt (and at most 64 KiB); the rest are counted (docs/jobs.md#logs). */
  job_log_lines: z.number().int().min(0).default(DEFAULT_JOB_LOG_LINES),
};

/**
 * One variant per backend: the common keys, its own, and every other backend's keys as `never`, so a key of
 * another backend is refused by name (config/config-issue.ts words it) rather than as an unknown key.
 */
function variant<B extends QueueBackendName>(backend: B) {
  const own = QUEUE_BACKEND_CONFIGS[backend];
  const foreign: Record<string, z.ZodOptional<z.ZodNever>> = {};
  for (const other of Object.values(QUEUE_BACKEND_CONFIGS)) {
    if (other.backend === backend) continue;
    for (const key of Object.keys(other.keys)) {
      if (key === "backend" || key in own.keys) continue;
      foreign[key] = z
        .never({ error: `applies to ${other.label} only, not backend = "${backend}" — remove ${key}, or set backend = "${other.backend}"` })
        .optional();
    }
  }
  return z.strictObject({ ...commonKeys, ...foreign, ...(own.keys as (typeof QUEUE_BACKEND_CONFIGS)[B]["keys"]) });
}

const BACKEND_LIST = `expected one of ${QUEUE_BACKENDS.map((b) => JSON.stringify(b)).join("|")}`;

/** `[plugin.queue]`: a discriminated union on `backend`, which defaults to "postgres". */
export const queueSchema = z.preprocess(
  (value) => (isObject(value) && value.backend === undefined ? { ...value, backend: "postgres" } : value),
  z.discriminatedUnion("backend", [variant("postgres"), variant("redis"), variant("rabbitmq"), variant("memory")], {
    error: (issue) => (issue.code === "invalid_union" ? `Invalid option: ${BACKEND_LIST}` : undefined),
  }),
);
export type QueueSection = z.output<typeof queueSchema>;

/**
 * `[queues.<name>] fairness`: "tenant" (each job's tenant is its key), or `{ key, weights }` with `key` a field of the
 * payload ("customerId", or a dotted path such as "customer.id") and `weights` turns per round of some keys.
 */
const queueFairnessSchema = z.union(
  [
    z.literal("tenant"),
    z.strictObject({
      key: z.string().regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'a payload field such as "customerId" or "customer.id"').optional(),
      weights: z.record(z.string(), z.number().int().min(1).max(1000)).optional(),
    }),
  ],
  { error: 'expected "tenant" or { key = "<payload field>", weights = { <key> = <turns> } }, e.g. fairness = "tenant" (jfast docs flow-control#fairness-on-a-whole-queue)' },
);

/** `[queues.<name>]`: a named queue (docs/queues.md); unset keys take `[plugin.queue]`'s value. */
export const namedQueueSchema = z.strictObject({
  /** Slots a worker process gives this queue's jobs, apart from every other queue's. */
  concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional(),
  max_attempts: z.number().int().min(1).optional(),
  visibility_timeout: seconds.optional(),
  keep_completed: retentionSchema.optional(),
  keep_dead: retentionSchema.optional(),
  keep_cancelled: retentionSchema.optional(),
  /** Workers start none of this queue's jobs (they wait, attempts untouched); enqueueing still works. */
  paused: z.boolean().default(false),
  /** Fair share across keys for every task of the queue (docs/flow-control.md#fairness-on-a-whole-queue). */
  fairness: queueFairnessSchema.optional(),
});

/** `[queues]`, by name; `default` is the queue of tasks that name none. */
export const queuesSchema = z.record(
  z.string().regex(QUEUE_NAME_PATTERN, 'a queue name is lower-case letters, digits, "_" and "-", starting with a letter (at most 40), e.g. [queues.media]'),
  namedQueueSchema,
);

/** What every backend's queue has. */
interface CommonQueueConfig {
  backend: QueueBackendName;
  /** The broker's address; null for the backends that have none (PostgreSQL, memory). */
  url: string | null;
  name: string;
  maxAttempts: number;
  visibilityTimeoutMs: number;
  backoffBaseMs: number;
  pollIntervalMs: number;
  concurrency: number;
  exposeStats: boolean;
  scheduler: boolean;
  /** Enqueue refuses a job whose payload, as JSON, is larger than this. */
  maxPayloadBytes: number;
  /** A completed job is stored (true) or forgotten on completion (false: `keep_completed = false` or 0). */
  keepCompleted: boolean;
  /** `keep_completed`, `keep_dead`, `keep_cancelled` of `[plugin.queue]` (docs/queues.md#retention). */
  retention: Record<RetainedState, Retention>;
  /** How often each process tries to claim the pruner and prune (`prune_interval`). */
  pruneIntervalMs: number;
  maxSnoozes: number;
  /** A handler's result larger than this (JSON, in bytes) is not stored; its job says why. */
  maxResultBytes: number;
  /** `tools.log` lines kept per attempt (`job_log_lines`). */
  jobLogLines: number;
  /** A fixed prefetch for every worker of this service; null: adaptive (docs/worker.md#concurrency). */
  prefetch: number | null;
  /**
   * The named queues (docs/queues.md), `default` first and always present; each with `[plugin.queue]`'s values
   * where `[queues.<name>]` leaves a key out.
   */
  queues: NamedQueueConfig[];
}

type BackendQueueConfig = PostgresQueueConfig | RedisQueueConfig | RabbitMqQueueConfig | MemoryQueueConfig;
type KeysOf<T> = T extends unknown ? keyof T : never;
/** Each backend's settings, the others' read as undefined: `config.queue.cluster` compiles and is undefined off Redis. */
type Exclusive<T> = T extends unknown ? T & { readonly [K in Exclude<KeysOf<BackendQueueConfig>, keyof T>]?: undefined } : never;

/** The resolved `[plugin.queue]`: what every queue has, and its backend's own settings, narrowed by `backend`. */
export type QueueConfig = CommonQueueConfig & Exclusive<BackendQueueConfig>;

export interface NamedQueueConfig {
  name: string;
  /** What the backend calls it: `[plugin.queue] name` for `default`, `<that>:<name>` otherwise. */
  backendName: string;
  concurrency: number;
  maxAttempts: number;
  visibilityTimeoutMs: number;
  /** `paused = true`: workers do not run this queue. */
  paused: boolean;
  /** `[plugin.queue]`'s retention with this queue's own `keep_*` on top. */
  retention: Record<RetainedState, Retention>;
  keepCompleted: boolean;
  /** `fairness`: every task of the queue takes turns by key, unless it says otherwise (queue/queue-fairness.ts); null: off. */
  fairness: QueueFairness | null;
}

/** A queue's fair share across keys: by tenant (`key` null) or by a payload field, with optional weights. */
export interface QueueFairness {
  /** The payload field (a dotted path) that holds a job's key; null: the job's tenant. */
  key: string | null;
  weights: Readonly<Record<string, number>>;
}

/** `[plugin.queue]` and `[queues.<name>]`, with JFAST_QUEUE_NAME and the backend's URL variable applied. */
export function resolveQueue(
  section: QueueSection | undefined,
  at: { file: string; env: NodeJS.ProcessEnv; queues: z.output<typeof queuesSchema> | undefined },
): QueueConfig {
  const queue = section ?? queueSchema.parse({});
  const own = resolveBackend(queue, at);
  const name = queueName(queue.name, at.env);
  const retention = resolveRetention(queue, { where: "[plugin.queue]", file: at.file });
  return {
    ...own,
    name,
    maxAttempts: queue.max_attempts,
    visibilityTimeoutMs: Math.round(queue.visibility_timeout * 1000),
    backoffBaseMs: Math.round(queue.backoff_base * 1000),
    pollIntervalMs: Math.round(queue.poll_interval * 1000),
    concurrency: queue.concurrency,
    exposeStats: queue.expose_stats,
    scheduler: queue.scheduler,
    maxPayloadBytes: queue.max_payload_bytes,
    keepCompleted: keepsCompleted(retention, queue.keep_completed),
    retention,
    pruneIntervalMs: resolvePruneInterval(queue.prune_interval, at.file),
    maxSnoozes: queue.max_snoozes,
    maxResultBytes: queue.max_result_bytes,
    jobLogLines: queue.job_log_lines,
    prefetch: queue.prefetch ?? null,
    queues: namedQueues({ queue, sections: at.queues ?? {}, base: name, retention, file: at.file }),
  };
}

function resolveBackend(queue: QueueSection, at: { file: string; env: NodeJS.ProcessEnv }): Exclusive<BackendQueueConfig> {
  switch (queue.backend) {
    case "postgres":
      return postgresQueue.resolve(queue);
    case "redis":
      return redisQueue.resolve(queue, at);
    case "rabbitmq":
      return rabbitMqQueue.resolve(queue, at);
    case "memory":
      return memoryQueue.resolve();
  }
}

/** `default` first (declared or not), then the `[queues.<name>]` sections in the order the file gives them. */
function namedQueues(params: {
  queue: QueueSection;
  sections: z.output<typeof queuesSchema>;
  base: string;
  retention: Record<RetainedState, Retention>;
  file: string;
}): NamedQueueConfig[] {
  const { queue, sections, base } = params;
  const names = [DEFAULT_QUEUE, ...Object.keys(sections).filter((n) => n !== DEFAULT_QUEUE)];
  return names.map((name) => {
    const section = sections[name];
    const retention = section ? resolveRetention(section, { where: `[queues.${name}]`, file: params.file, base: params.retention }) : params.retention;
    return {
      retention,
      keepCompleted: keepsCompleted(retention, section?.keep_completed ?? queue.keep_completed),
      name,
      backendName: backendQueueName(base, name),
      concurrency: section?.concurrency ?? queue.concurrency,
      maxAttempts: section?.max_attempts ?? queue.max_attempts,
      visibilityTimeoutMs: Math.round((section?.visibility_timeout ?? queue.visibility_timeout) * 1000),
      paused: section?.paused ?? false,
      fairness: resolveFairness(section?.fairness),
    };
  });
}

function resolveFairness(fairness: z.output<typeof queueFairnessSchema> | undefined): QueueFairness | null {
  if (fairness === undefined) return null;
  if (fairness === "tenant") return { key: null, weights: {} };
  return { key: fairness.key ?? null, weights: fairness.weights ?? {} };
}

/** JFAST_QUEUE_NAME, else [plugin.queue] name: the Redis key prefix, RabbitMQ queue or table rows of the queue. */
function queueName(fromFile: string, env: NodeJS.ProcessEnv): string {
  const name = env.JFAST_QUEUE_NAME?.trim();
  if (!name) return fromFile;
  if (!/^[a-zA-Z0-9_.-]+$/.test(name)) {
    throw new ConfigError(`JFAST_QUEUE_NAME="${name}" is not a queue name`, {
      code: "CONFIG_INVALID",
      hint: `use letters, digits, ".", "_" and "-", e.g. JFAST_QUEUE_NAME=billing.preview`,
      docs: "jfast docs configuration#pluginqueue",
    });
  }
  return name;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
