import { z } from "zod";
import { MAX_CONCURRENCY } from "../core/concurrency.js";
import { QUEUE_NAME_PATTERN } from "../core/named-queue.js";

/** Plugin names accepted in `[plugins] enabled`. */
export const PLUGIN_NAMES = ["observability", "database", "queue", "outbox", "kafka", "telemetry"] as const;
export type PluginName = (typeof PLUGIN_NAMES)[number];

export const QUEUE_BACKENDS = ["postgres", "redis", "rabbitmq", "memory"] as const;

const seconds = z.number().positive();

/**
 * `keep_completed`, `keep_dead`, `keep_cancelled` (docs/queues.md#retention): true (the default retention), false
 * (none), a duration such as "7d", or a count of the newest to keep. Checked further in load-config.ts.
 */
const retention = z.union([z.boolean(), z.string(), z.number().int().min(0)], {
  error: 'expected true, false, a duration such as "7d", or a number of jobs to keep such as 10000',
});

export const databaseSchema = z
        .strictObject({
          url: z.string().optional(),
          /** A streaming replica the dashboard's and /metrics' reads go to, so they do not load the primary. */
          read_url: z.string().optional(),
          rls: z.boolean().default(false),
          schema: z.string().regex(/^[a-z_][a-z0-9_]*$/).default("public"),
          pool_size: z.number().int().min(1).max(200).default(10),
          inbox_retention_days: z.number().positive().default(7),
        });

export const queueSchema = z
        .strictObject({
          backend: z.enum(QUEUE_BACKENDS).default("postgres"),
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
          keep_completed: retention.default(true),
          keep_dead: retention.default(true),
          keep_cancelled: retention.default(true),
          /** How often the pruner runs: a duration such as "1m", or seconds. */
          prune_interval: z.union([z.string(), seconds]).default("1m"),
          /** RabbitMQ: the broker queue type of the work queue, the delay cascade and the dead queue. */
          queue_type: z.enum(["classic", "quorum"]).default("classic"),
          /** Redis: `url` names seed nodes of a Redis Cluster (comma-separated); connect through the Cluster client. */
          cluster: z.boolean().default(false),
          /** Redis: replicas that must acknowledge an enqueue and a completion (WAIT) before it returns; 0: none. */
          wait_replicas: z.number().int().min(0).max(10).default(0),
          /** Redis: how long WAIT may take (seconds) before the write fails as not replicated. */
          wait_timeout: seconds.default(1),
          /**
           * PostgreSQL: a claim commits as every other write does, under the server's synchronous_commit (on by
           * default), instead of with synchronous_commit off for its own transaction (docs/postgres.md#durability-of-claims).
           */
          durable_claims: z.boolean().default(false),
          /** How many times one job may snooze (`return snooze(ms)`) before it is dead-lettered. */
          max_snoozes: z.number().int().min(0).default(100),
        });

/** `[queues.<name>]`: a named queue (docs/queues.md); unset keys take `[plugin.queue]`'s value. */
export const namedQueueSchema = z.strictObject({
  /** Slots a worker process gives this queue's jobs, apart from every other queue's. */
  concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional(),
  max_attempts: z.number().int().min(1).optional(),
  visibility_timeout: seconds.optional(),
  keep_completed: retention.optional(),
  keep_dead: retention.optional(),
  keep_cancelled: retention.optional(),
  /** Workers start none of this queue's jobs (they wait, attempts untouched); enqueueing still works. */
  paused: z.boolean().default(false),
});

export const configSchema = z.strictObject({
  service: z.strictObject({
    name: z.string().regex(/^[a-z][a-z0-9_-]*$/, "a lower-case name such as \"billing\""),
    base_port: z.number().int().min(1).max(65535).default(8000),
    environment: z.enum(["development", "production", "test"]).optional(),
  }),
  plugins: z
    .strictObject({
      enabled: z.array(z.enum(PLUGIN_NAMES)).default([]),
    })
    .default({ enabled: [] }),
  plugin: z
    .strictObject({
      observability: z
        .strictObject({
          log_level: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
          /** GET /metrics in production (always open elsewhere), like [plugin.queue] expose_stats. */
          expose_metrics: z.boolean().default(false),
        })
        .optional(),
      database: databaseSchema.optional(),
      queue: queueSchema.optional(),
      outbox: z
        .strictObject({
          max_attempts: z.number().int().min(1).default(10),
          poll_interval: seconds.default(1),
          backoff_base: seconds.default(1),
          send_timeout: seconds.default(30),
          retention: z.number().min(0).default(3600),
        })
        .optional(),
      kafka: z
        .strictObject({
          bootstrap_servers: z.string().optional(),
          consumer_group: z.string().optional(),
          /** Put before every topic and the consumer group: several environments (or test runs) on one cluster. */
          topic_prefix: z.string().regex(/^[a-zA-Z0-9._-]*$/, "letters, digits, \".\", \"_\" and \"-\" only, e.g. \"staging.\"").optional(),
          host_port: z.number().int().optional(),
          advertised_host: z.string().optional(),
          image: z.string().optional(),
        })
        .optional(),
      telemetry: z.strictObject({ endpoint: z.string().optional(), service_name: z.string().optional() }).optional(),
    })
    .default({}),
  /** Named queues, each with its own worker slots (docs/queues.md); `default` is the queue of tasks that name none. */
  queues: z
    .record(
      z.string().regex(QUEUE_NAME_PATTERN, 'a queue name is lower-case letters, digits, "_" and "-", starting with a letter (at most 40), e.g. [queues.media]'),
      namedQueueSchema,
    )
    .optional(),
  /** jfast's own HTTP routes (docs/embedding.md#http-routes). */
  http: z
    .strictObject({
      /** GET /ready with depths and error text in production too (always there elsewhere). */
      ready_details: z.boolean().default(false),
    })
    .optional(),
  /** The admin API under /jfast/admin (docs/admin-api.md). Tokens are better given by JFAST_ADMIN_TOKENS. */
  admin: z
    .strictObject({
      tokens: z.array(z.string()).default([]),
      redact: z.array(z.string().min(1)).default([]),
      redact_defaults: z.boolean().default(true),
      /** Largest request body the admin API reads; calls carry ids and filters, never files. */
      max_body_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
      /** Scanning views (error groups, filtered previews, searches) one caller may call per 10 s (docs/admin-api.md#scan-limits). */
      scan_calls: z.number().int().min(1).max(10_000).default(10),
    })
    .optional(),
});

export type RawConfig = z.infer<typeof configSchema>;
