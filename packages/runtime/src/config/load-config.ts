import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import type { z } from "zod";
import { ConfigError } from "../errors/jfast-error.js";
import { tomlSyntaxMessage } from "./toml-syntax-error.js";
import { backendQueueName, DEFAULT_QUEUE } from "../core/named-queue.js";
import { DEFAULT_RETENTION, parseDuration, RETAINED_STATES, type RetainedState, type Retention } from "../core/retention.js";
import { parseEncryptionKeys, type EncryptionKey } from "../core/crypto/keyring.js";
import { refuseRenamedDisabledPlugins, refuseRenamedPlugins } from "./renamed-plugins.js";
import { configSchema, databaseSchema, queueSchema, PLUGIN_NAMES, type PluginName, type RawConfig } from "./schema.js";

export interface DatabaseConfig {
  /** null: embedded PGlite under `<root>/.jfast/`. */
  url: string | null;
  /** A read replica for the admin API's and /metrics' reads (`[plugin.database] read_url`, DATABASE_READ_URL); null: the primary. */
  readUrl: string | null;
  rls: boolean;
  schema: string;
  poolSize: number;
  inboxRetentionDays: number;
}

export interface QueueConfig {
  backend: "postgres" | "redis" | "rabbitmq" | "memory";
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
  /** A fixed prefetch for every worker of this service; null: adaptive (docs/worker.md#concurrency). */
  prefetch: number | null;
  /** RabbitMQ: classic or quorum queues (docs/rabbitmq.md#queue-types). */
  queueType: "classic" | "quorum";
  /** Redis: `url` lists seed nodes of a Redis Cluster. */
  cluster: boolean;
  /** Redis: replicas that must acknowledge an enqueue and a completion (WAIT), and for how long to wait. */
  waitReplicas: number;
  waitTimeoutMs: number;
  /** PostgreSQL: `durable_claims`, a claim waits for its WAL flush (docs/postgres.md#durability-of-claims). */
  durableClaims: boolean;
  /**
   * The named queues (docs/queues.md), `default` first and always present; each with `[plugin.queue]`'s values
   * where `[queues.<name>]` leaves a key out.
   */
  queues: NamedQueueConfig[];
}

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
}

export interface OutboxConfig {
  /** Delivery attempts of a relayed row before it is dead. */
  maxAttempts: number;
  /** The relay's safety-net poll; a committed write wakes it at once through NOTIFY. */
  pollIntervalMs: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), capped at 5 minutes. */
  backoffBaseMs: number;
  /** A send that has not settled by then counts as failed (it is retried; the id makes a repeat a no-op where the backend can tell). */
  sendTimeoutMs: number;
  /** How long delivered rows are kept: a repeated id written within it is recognised and not relayed again. */
  retentionMs: number;
}

export interface JfastConfig {
  root: string;
  file: string;
  service: { name: string; basePort: number; environment: "development" | "production" | "test" };
  plugins: ReadonlySet<PluginName>;
  /** Plugins jfast.toml enables that JFAST_DISABLE_PLUGINS turns off in this process (they are not in `plugins`). */
  disabledPlugins: ReadonlySet<PluginName>;
  /** The port to listen on: `PORT`, else `[service] base_port`. */
  port: number;
  /**
   * The address `jfast dev` listens on: `HOST` when set, else 127.0.0.1 (this machine only) outside production,
   * null in production: every interface, as a container needs.
   */
  host: string | null;
  database: DatabaseConfig | null;
  queue: QueueConfig | null;
  outbox: OutboxConfig | null;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** The kafka plugin (`[plugin.kafka]`); null when "kafka" is not enabled. */
  kafka: KafkaConfig | null;
  /** jfast's own routes: whether GET /ready shows counts and error text (development, test, or `[http] ready_details`). */
  http: { readyDetails: boolean };
  /** Bearer tokens of the admin API (`[admin] tokens` plus JFAST_ADMIN_TOKENS) and payload fields it redacts. */
  admin: AdminConfig;
  /** `JFAST_ENCRYPTION_KEYS`: the first key encrypts, every one decrypts (docs/security.md#encryption-at-rest). */
  encryption: { keys: readonly EncryptionKey[] };
  raw: RawConfig;
}

const DOCS = "jfast docs configuration";

/**
 * Reads and validates `<root>/jfast.toml`. The only place that reads process.env: URLs may be overridden by
 * DATABASE_URL, REDIS_URL, AMQP_URL, KAFKA_BROKERS; PORT and HOST where to listen; JFAST_ENV / NODE_ENV the environment;
 * JFAST_DISABLE_PLUGINS turns enabled plugins off, JFAST_QUEUE_NAME and KAFKA_TOPIC_PREFIX move a service's
 * queue and topics into a namespace of their own; JFAST_ENCRYPTION_KEYS holds the keys of encrypted tasks.
 */
export async function loadConfig(params: { root: string; env?: NodeJS.ProcessEnv; overrides?: ConfigOverrides }): Promise<JfastConfig> {
  const file = path.join(params.root, "jfast.toml");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw new ConfigError(`cannot read ${file}`, {
      code: "CONFIG_MISSING",
      hint: `create jfast.toml in the service root with at least [service] name = "<your-service>"`,
      cause,
    });
  }
  let data: unknown;
  try {
    data = parseToml(text);
  } catch (cause) {
    // No `cause`: the parser's own message quotes the line as written, secrets and all.
    throw new ConfigError(`${file} is not valid TOML: ${tomlSyntaxMessage(cause)}`, {
      code: "CONFIG_SYNTAX",
      hint: "fix the TOML syntax at the line shown (values that look secret are masked)",
    });
  }
  return resolveConfig({ root: params.root, file, data, env: params.env ?? process.env, overrides: params.overrides });
}

/** Values a caller (tests, the CLI) sets on top of the file; still validated by the same schema. */
export interface ConfigOverrides {
  [section: string]: unknown;
}

export function resolveConfig(params: {
  root: string;
  file: string;
  data: unknown;
  env: NodeJS.ProcessEnv;
  overrides?: ConfigOverrides | undefined;
}): JfastConfig {
  const merged = params.overrides ? deepMerge(params.data, params.overrides) : params.data;
  refuseRenamedPlugins(merged, params.file);
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) throw configIssue(params.file, parsed.error);
  const raw = parsed.data;
  const { env } = params;
  const enabled = new Set<PluginName>(raw.plugins.enabled);
  const disabled = disabledPlugins(env);
  for (const name of disabled) enabled.delete(name);

  for (const section of Object.keys(raw.plugin) as PluginName[]) {
    if (raw.plugin[section] !== undefined && !enabled.has(section) && !disabled.has(section)) {
      throw new ConfigError(`${params.file}: [plugin.${section}] is configured but the "${section}" plugin is not enabled`, {
        code: "CONFIG_PLUGIN_MISSING",
        hint: `add "${section}" to [plugins] enabled, or remove the [plugin.${section}] section`,
        docs: DOCS,
      });
    }
  }

  const queueRaw = enabled.has("queue") ? (raw.plugin.queue ?? queueSchema.parse({})) : null;
  if (raw.queues !== undefined && !queueRaw) {
    throw new ConfigError(`${params.file}: [queues.${Object.keys(raw.queues)[0] ?? "<name>"}] is configured but the "queue" plugin is not enabled`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "queue" to [plugins] enabled, or remove the [queues] sections`,
      docs: "jfast docs queues#configuration",
    });
  }
  const databaseRaw = enabled.has("database")
    ? (raw.plugin.database ?? databaseSchema.parse({}))
    : null;
  const databaseUrl = databaseRaw ? env.DATABASE_URL || databaseRaw.url || null : null;
  const databaseReadUrl = databaseRaw ? env.DATABASE_READ_URL || databaseRaw.read_url || null : null;
  if (databaseReadUrl && !databaseUrl) {
    throw new ConfigError(`${params.file}: [plugin.database] read_url names a replica, but the database has no url (it runs embedded, which has no replicas)`, {
      code: "CONFIG_INVALID",
      hint: "set DATABASE_URL / [plugin.database] url to the primary server, or remove read_url (DATABASE_READ_URL)",
      docs: "jfast docs postgres#reading-from-a-replica",
    });
  }

  if (queueRaw?.backend === "postgres" && !databaseRaw) {
    throw new ConfigError(`${params.file}: [plugin.queue] backend = "postgres" needs the database plugin`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "database" to [plugins] enabled (with no url it runs embedded under .jfast/), or choose another backend`,
      docs: DOCS,
    });
  }
  if (enabled.has("outbox") && !databaseRaw) {
    throw new ConfigError(`${params.file}: the outbox writes in your database transaction, so it needs the database plugin`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "database" to [plugins] enabled`,
      docs: "jfast docs outbox",
    });
  }

  const queueUrl =
    queueRaw === null
      ? null
      : queueRaw.backend === "redis"
        ? (env.REDIS_URL ?? queueRaw.url ?? null)
        : queueRaw.backend === "rabbitmq"
          ? (env.AMQP_URL ?? queueRaw.url ?? null)
          : null;
  if (queueRaw && (queueRaw.backend === "redis" || queueRaw.backend === "rabbitmq") && !queueUrl) {
    const variable = queueRaw.backend === "redis" ? "REDIS_URL" : "AMQP_URL";
    throw new ConfigError(`${params.file}: [plugin.queue] backend = "${queueRaw.backend}" needs a url`, {
      code: "CONFIG_INVALID",
      hint: `set [plugin.queue] url, or the ${variable} environment variable`,
      docs: DOCS,
    });
  }

  if (queueRaw && queueRaw.backend !== "redis" && (queueRaw.cluster || queueRaw.wait_replicas > 0)) {
    const key = queueRaw.cluster ? "cluster" : "wait_replicas";
    throw new ConfigError(`${params.file}: [plugin.queue] ${key} applies to the Redis queue only, not backend = "${queueRaw.backend}"`, {
      code: "CONFIG_INVALID",
      hint: `remove ${key}, or set backend = "redis"`,
      docs: DOCS,
    });
  }

  if (queueRaw && queueRaw.backend !== "rabbitmq" && queueRaw.queue_type !== "classic") {
    throw new ConfigError(`${params.file}: [plugin.queue] queue_type applies to the RabbitMQ queue only, not backend = "${queueRaw.backend}"`, {
      code: "CONFIG_INVALID",
      hint: `remove queue_type, or set backend = "rabbitmq"`,
      docs: DOCS,
    });
  }

  if (queueRaw && queueRaw.backend !== "postgres" && queueRaw.durable_claims) {
    throw new ConfigError(`${params.file}: [plugin.queue] durable_claims applies to the PostgreSQL queue only, not backend = "${queueRaw.backend}"`, {
      code: "CONFIG_INVALID",
      hint: `remove durable_claims, or set backend = "postgres"`,
      docs: DOCS,
    });
  }

  const baseQueueName = queueRaw ? queueName(queueRaw.name, env) : "";
  const retention = queueRaw ? { ...DEFAULT_RETENTION, ...resolveRetention(queueRaw, "[plugin.queue]", params.file) } : null;
  const environment =
    raw.service.environment ??
    (env.JFAST_ENV === "production" || env.NODE_ENV === "production"
      ? "production"
      : env.JFAST_ENV === "test" || env.NODE_ENV === "test"
        ? "test"
        : "development");

  const portText = env.PORT;
  let port = raw.service.base_port;
  if (portText !== undefined && portText !== "") {
    const value = Number(portText);
    if (!Number.isInteger(value) || value < 0 || value > 65535) {
      throw new ConfigError(`PORT="${portText}" is not a port number`, { hint: "set PORT to a whole number between 1 and 65535, or unset it to use [service] base_port", docs: DOCS });
    }
    port = value;
  }

  return {
    root: params.root,
    file: params.file,
    service: { name: raw.service.name, basePort: raw.service.base_port, environment },
    plugins: enabled,
    disabledPlugins: new Set([...disabled].filter((name) => raw.plugins.enabled.includes(name))),
    port,
    host: env.HOST?.trim() || (environment === "production" ? null : "127.0.0.1"),
    encryption: { keys: parseEncryptionKeys(env.JFAST_ENCRYPTION_KEYS) },
    database: databaseRaw && {
      url: databaseUrl,
      readUrl: databaseReadUrl,
      rls: databaseRaw.rls,
      schema: databaseRaw.schema,
      poolSize: databaseRaw.pool_size,
      inboxRetentionDays: databaseRaw.inbox_retention_days,
    },
    queue: queueRaw && {
      backend: queueRaw.backend,
      url: queueUrl,
      name: baseQueueName,
      maxAttempts: queueRaw.max_attempts,
      visibilityTimeoutMs: Math.round(queueRaw.visibility_timeout * 1000),
      backoffBaseMs: Math.round(queueRaw.backoff_base * 1000),
      pollIntervalMs: Math.round(queueRaw.poll_interval * 1000),
      concurrency: queueRaw.concurrency,
      exposeStats: queueRaw.expose_stats,
      scheduler: queueRaw.scheduler,
      maxPayloadBytes: queueRaw.max_payload_bytes,
      keepCompleted: keepsCompleted(retention!, queueRaw.keep_completed),
      retention: retention!,
      pruneIntervalMs: resolvePruneInterval(queueRaw.prune_interval, params.file),
      maxSnoozes: queueRaw.max_snoozes,
      prefetch: queueRaw.prefetch ?? null,
      queueType: queueRaw.queue_type,
      cluster: queueRaw.cluster,
      waitReplicas: queueRaw.wait_replicas,
      waitTimeoutMs: Math.round(queueRaw.wait_timeout * 1000),
      durableClaims: queueRaw.durable_claims,
      queues: namedQueues({ raw, queue: queueRaw, base: baseQueueName, retention: retention!, file: params.file }),
    },
    outbox: enabled.has("outbox")
      ? {
          maxAttempts: raw.plugin.outbox?.max_attempts ?? 10,
          pollIntervalMs: Math.round((raw.plugin.outbox?.poll_interval ?? 1) * 1000),
          backoffBaseMs: Math.round((raw.plugin.outbox?.backoff_base ?? 1) * 1000),
          sendTimeoutMs: Math.round((raw.plugin.outbox?.send_timeout ?? 30) * 1000),
          retentionMs: Math.round((raw.plugin.outbox?.retention ?? 3600) * 1000),
        }
      : null,
    logLevel: raw.plugin.observability?.log_level ?? "info",
    kafka: enabled.has("kafka") ? resolveKafka(raw, env, params.file) : null,
    http: { readyDetails: environment !== "production" || raw.http?.ready_details === true },
    admin: resolveAdmin(raw, env, params.file),
    raw,
  };
}

export interface KafkaConfig {
  /** Bootstrap addresses: KAFKA_BROKERS, else bootstrap_servers, else localhost:<host_port>. */
  brokers: string[];
  /** Where `brokers` came from, so a connection error can say which setting to fix. */
  brokersFrom: "KAFKA_BROKERS" | "bootstrap_servers" | "default";
  /** The group `on` handlers consume in; one per service (default: the service name), after `topicPrefix`. */
  consumerGroup: string;
  /** Put before every topic this service publishes to or consumes, and before its group ("" for none). */
  topicPrefix: string;
  /** The port compose publishes for Kafka and the broker advertises to the host (default base_port + 2). */
  hostPort: number;
  advertisedHost: string;
  image: string;
}

/** A broker image that resolves today; `[plugin.kafka] image` moves it when registries move. */
export const DEFAULT_KAFKA_IMAGE = "apache/kafka:4.1.1";

function resolveKafka(raw: RawConfig, env: NodeJS.ProcessEnv, file: string): KafkaConfig {
  const section = raw.plugin.kafka ?? {};
  const hostPort = section.host_port ?? raw.service.base_port + 2;
  if (!Number.isInteger(hostPort) || hostPort < 1 || hostPort > 65535) {
    throw new ConfigError(`${file}: [plugin.kafka] host_port = ${hostPort} is not a port number`, {
      hint: "set host_port to a whole number between 1 and 65535 (default: [service] base_port + 2)",
      docs: "jfast docs kafka#configuration",
    });
  }
  const fromEnv = env.KAFKA_BROKERS?.trim();
  const text = fromEnv || section.bootstrap_servers?.trim() || `localhost:${hostPort}`;
  const brokers = text.split(",").map((b) => b.trim()).filter(Boolean);
  const from = fromEnv ? "KAFKA_BROKERS" : section.bootstrap_servers?.trim() ? "bootstrap_servers" : "default";
  for (const broker of brokers) {
    if (!/^[^\s:/]+:\d{1,5}$/.test(broker)) {
      throw new ConfigError(`${from === "KAFKA_BROKERS" ? "KAFKA_BROKERS" : `${file}: [plugin.kafka] bootstrap_servers`}: "${broker}" is not host:port`, {
        hint: `list brokers as "host:port" separated by commas, e.g. "localhost:9092,kafka-2:9092"`,
        docs: "jfast docs kafka#configuration",
      });
    }
  }
  const topicPrefix = env.KAFKA_TOPIC_PREFIX?.trim() || section.topic_prefix || "";
  if (!/^[a-zA-Z0-9._-]*$/.test(topicPrefix) || topicPrefix.length > 200) {
    throw new ConfigError(`KAFKA_TOPIC_PREFIX="${topicPrefix}" cannot start a Kafka topic name`, {
      hint: `use letters, digits, ".", "_" and "-" (at most 200), e.g. KAFKA_TOPIC_PREFIX=staging.`,
      docs: "jfast docs kafka#topic-prefix",
    });
  }
  return {
    brokers,
    brokersFrom: from,
    consumerGroup: topicPrefix + (section.consumer_group?.trim() || raw.service.name),
    topicPrefix,
    hostPort,
    advertisedHost: section.advertised_host?.trim() || "localhost",
    image: section.image?.trim() || DEFAULT_KAFKA_IMAGE,
  };
}

/**
 * JFAST_DISABLE_PLUGINS="kafka,telemetry": plugins turned off in this process whatever jfast.toml enables (a
 * laptop without Kafka runs the service without its kafka plugin). Their [plugin.x] sections are ignored.
 */
function disabledPlugins(env: NodeJS.ProcessEnv): Set<PluginName> {
  const names = (env.JFAST_DISABLE_PLUGINS ?? "").split(",").map((n) => n.trim()).filter(Boolean);
  refuseRenamedDisabledPlugins(names);
  const unknown = names.filter((n) => !(PLUGIN_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new ConfigError(`JFAST_DISABLE_PLUGINS names ${unknown.map((n) => `"${n}"`).join(", ")}, which ${unknown.length > 1 ? "are not plugins" : "is not a plugin"}`, {
      code: "CONFIG_INVALID",
      hint: `list plugin names separated by commas (known plugins are ${PLUGIN_NAMES.join(", ")}), e.g. JFAST_DISABLE_PLUGINS=kafka`,
      docs: "jfast docs configuration#environment-variables",
    });
  }
  return new Set(names as PluginName[]);
}

/** `default` first (declared or not), then the `[queues.<name>]` sections in the order the file gives them. */
function namedQueues(params: {
  raw: RawConfig;
  queue: z.infer<typeof queueSchema>;
  base: string;
  retention: Record<RetainedState, Retention>;
  file: string;
}): NamedQueueConfig[] {
  const { raw, queue, base } = params;
  const sections = raw.queues ?? {};
  const names = [DEFAULT_QUEUE, ...Object.keys(sections).filter((n) => n !== DEFAULT_QUEUE)];
  return names.map((name) => {
    const section = sections[name];
    const retention = section ? { ...params.retention, ...resolveRetention(section, `[queues.${name}]`, params.file) } : params.retention;
    return {
      retention,
      keepCompleted: keepsCompleted(retention, section?.keep_completed ?? queue.keep_completed),
      name,
      backendName: backendQueueName(base, name),
      concurrency: section?.concurrency ?? queue.concurrency,
      maxAttempts: section?.max_attempts ?? queue.max_attempts,
      visibilityTimeoutMs: Math.round((section?.visibility_timeout ?? queue.visibility_timeout) * 1000),
      paused: section?.paused ?? false,
    };
  });
}

type RetentionValue = boolean | string | number;
const RETENTION_DOCS = "jfast docs queues#retention";

/** The `keep_*` keys a section sets (all three for `[plugin.queue]`, whose schema defaults them to true). */
function resolveRetention(section: Partial<Record<`keep_${RetainedState}`, RetentionValue>>, where: string, file: string): Partial<Record<RetainedState, Retention>> {
  const out: Partial<Record<RetainedState, Retention>> = {};
  for (const state of RETAINED_STATES) {
    const value = section[`keep_${state}`];
    if (value !== undefined) out[state] = retentionOf(value, { key: `${where} keep_${state}`, state, file });
  }
  return out;
}

function retentionOf(value: RetentionValue, params: { key: string; state: RetainedState; file: string }): Retention {
  if (value === true) return DEFAULT_RETENTION[params.state];
  if (value === false) return { kind: "age", ms: 0 };
  if (typeof value === "number") return { kind: "count", count: value };
  if (value.trim() === "forever") return { kind: "forever" };
  const ms = parseDuration(value);
  if (ms === null) {
    throw new ConfigError(`${params.file}: ${params.key} = "${value}" is not a retention`, {
      code: "CONFIG_INVALID",
      hint: `write a duration with its unit ("90s", "15m", "24h", "7d"), a number of jobs to keep (10000), true, false or "forever"`,
      docs: RETENTION_DOCS,
    });
  }
  return { kind: "age", ms };
}

/** `keep_completed = false` (or 0): completed jobs are not stored at all, which saves a write per job. */
function keepsCompleted(retention: Record<RetainedState, Retention>, value: RetentionValue): boolean {
  const kept = retention.completed;
  return !(value === false || (kept.kind === "count" && kept.count === 0));
}

function resolvePruneInterval(value: string | number, file: string): number {
  const ms = typeof value === "number" ? Math.round(value * 1000) : parseDuration(value);
  if (ms === null || ms < 1000) {
    throw new ConfigError(`${file}: [plugin.queue] prune_interval = ${JSON.stringify(value)} is not an interval of at least a second`, {
      code: "CONFIG_INVALID",
      hint: `write a duration with its unit, such as "1m" or "30s" (or a number of seconds)`,
      docs: RETENTION_DOCS,
    });
  }
  return ms;
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

export interface AdminConfig {
  /** `dashboard` marks a jfast dashboard's token: it acts for the person named in x-jfast-actor (admin/tokens.ts). */
  tokens: { name: string; role: "viewer" | "operator" | "dashboard"; token: string }[];
  redact: string[];
  /** `[admin] redact_defaults`: also redact the usual secret-bearing names (admin/redact.ts). */
  redactDefaults: boolean;
  /** A request body past this is refused (413) without being read further. */
  maxBodyBytes: number;
  /** `[admin] scan_calls`: calls of the scanning views per caller per 10 s (admin/scan-limit.ts). */
  scanCalls: number;
}

/** Shorter tokens can be guessed or remembered; `openssl rand -hex 24` makes one of 48. */
const MIN_ADMIN_TOKEN_LENGTH = 24;

/**
 * Admin tokens are `role:token` or `name:role:token` entries, from `[admin] tokens` and from
 * JFAST_ADMIN_TOKENS (comma-separated), so secrets can stay out of jfast.toml.
 */
function resolveAdmin(raw: RawConfig, env: NodeJS.ProcessEnv, file: string): AdminConfig {
  const entries = [...(raw.admin?.tokens ?? []), ...(env.JFAST_ADMIN_TOKENS ?? "").split(",")].map((e) => e.trim()).filter(Boolean);
  const tokens = entries.map((entry, index) => {
    const parts = entry.split(":");
    const [name, role, token] = parts.length >= 3 ? [parts[0]!, parts[1]!, parts.slice(2).join(":")] : [null, parts[0]!, parts[1] ?? ""];
    const where = `admin token #${index + 1} (from [admin] tokens in ${file} or JFAST_ADMIN_TOKENS)`;
    if (role !== "viewer" && role !== "operator" && role !== "dashboard") {
      throw new ConfigError(`${where} is not "role:token"`, {
        code: "CONFIG_INVALID",
        hint: `write each entry as "viewer:<token>" or "operator:<token>" (optionally "<name>:operator:<token>"; a dashboard's token as "<name>:dashboard:<token>")`,
        docs: "jfast docs admin-api#tokens",
      });
    }
    if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
      throw new ConfigError(`${where} has ${token.length} characters; an admin token needs at least ${MIN_ADMIN_TOKEN_LENGTH}`, {
        code: "CONFIG_INVALID",
        hint: `generate one with \`openssl rand -hex 24\` (48 characters) and use it as "${role}:<token>"`,
        docs: "jfast docs admin-api#tokens",
      });
    }
    return { name: name ?? `${role}-${createHash("sha256").update(token).digest("hex").slice(0, 8)}`, role: role as "viewer" | "operator" | "dashboard", token };
  });
  return {
    tokens,
    redact: raw.admin?.redact ?? [],
    redactDefaults: raw.admin?.redact_defaults ?? true,
    scanCalls: raw.admin?.scan_calls ?? 10,
    maxBodyBytes: raw.admin?.max_body_bytes ?? 1024 * 1024,
  };
}

function configIssue(file: string, error: z.ZodError): ConfigError {
  const lines = error.issues.map((issue) => {
    const key = formatPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.join(", ");
      return `${key ? `${key}: ` : ""}unknown key${issue.keys.length > 1 ? "s" : ""} ${keys} — remove ${issue.keys.length > 1 ? "them" : "it"} or fix the spelling`;
    }
    if (issue.path[0] === "queues" && issue.code === "invalid_key") {
      return `${key}: not a queue name — a queue name is lower-case letters, digits, "_" and "-", starting with a letter (at most 40), e.g. [queues.media]`;
    }
    if (issue.path[0] === "plugins" && issue.path[1] === "enabled" && issue.code === "invalid_value") {
      return `${key}: ${issue.message} — known plugins are ${PLUGIN_NAMES.join(", ")}`;
    }
    return `${key}: ${issue.message}`;
  });
  return new ConfigError(`${file} is invalid:\n  - ${lines.join("\n  - ")}`, {
    code: "CONFIG_INVALID",
    hint: "correct the keys listed above; every key is described in the configuration page",
    docs: DOCS,
  });
}

function formatPath(pathParts: readonly PropertyKey[]): string {
  if (pathParts.length === 0) return "(top level)";
  const [first, second, ...rest] = pathParts.map(String);
  if ((first === "plugin" || first === "queues") && second !== undefined) {
    return `[${first}.${second}]${rest.length ? ` ${rest.join(".")}` : ""}`;
  }
  return `[${first}]${second !== undefined ? ` ${[second, ...rest].join(".")}` : ""}`;
}

function deepMerge(base: unknown, extra: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(extra)) return extra;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) out[k] = k in out ? deepMerge(out[k], v) : v;
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
