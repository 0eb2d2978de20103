import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { resolveAdmin, type AdminConfig } from "../admin/config.js";
import { resolveAlerting, type AlertingConfig } from "../alerts/config.js";
import { refuseKafkaLagWithoutKafka } from "../alerts/kafka-lag.js";
import { parseEncryptionKeys, type EncryptionKey } from "../core/crypto/keyring.js";
import { resolveDatabase, type DatabaseConfig } from "../database/config.js";
import { ConfigError } from "../errors/jfast-error.js";
import { resolveHttp, type HttpConfig } from "../http/config.js";
import { resolveKafka, type KafkaConfig } from "../kafka/config.js";
import { resolveObservability, resolveTelemetry, type LogLevel, type TelemetryConfig } from "../observability/config.js";
import { resolveOutbox, type OutboxConfig } from "../outbox/config.js";
import { resolveQueue, type QueueConfig } from "../queue/config.js";
import { configIssue } from "./config-issue.js";
import { enabledPlugins, refusePluginConflicts } from "./plugin-rules.js";
import { refuseRenamedPlugins } from "./renamed-plugins.js";
import { configSchema, type PluginName } from "./schema.js";
import { tomlSyntaxMessage } from "./toml-syntax-error.js";

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
  /** Each plugin's section, resolved by its owner; null when the plugin is not enabled. */
  database: DatabaseConfig | null;
  queue: QueueConfig | null;
  outbox: OutboxConfig | null;
  kafka: KafkaConfig | null;
  telemetry: TelemetryConfig | null;
  /** `[plugin.observability]`, which applies whether the plugin is listed or not. */
  logLevel: LogLevel;
  metrics: { open: boolean };
  /** jfast's own routes: whether GET /ready shows counts and error text (development, test, or `[http] ready_details`). */
  http: HttpConfig;
  /** Bearer tokens of the admin API (`[admin] tokens` plus JFAST_ADMIN_TOKENS) and payload fields it redacts. */
  admin: AdminConfig;
  /** `JFAST_ENCRYPTION_KEYS`: the first key encrypts, every one decrypts (docs/security.md#encryption-at-rest). */
  encryption: { keys: readonly EncryptionKey[] };
  /** `[[alerts]]` and `[alerting]` (docs/alerts.md); absent in a config made by hand: no rule from jfast.toml. */
  alerts?: AlertingConfig;
}

const DOCS = "jfast docs configuration";

/**
 * Reads `<root>/jfast.toml` and resolves it with the environment. Only config/ and the sections it hands `env` to
 * read the environment: URLs may be overridden by DATABASE_URL, REDIS_URL, AMQP_URL, KAFKA_BROKERS; PORT and HOST
 * where to listen; JFAST_ENV / NODE_ENV the environment; JFAST_DISABLE_PLUGINS turns enabled plugins off,
 * JFAST_QUEUE_NAME and KAFKA_TOPIC_PREFIX move a service's queue and topics into a namespace of their own;
 * JFAST_ENCRYPTION_KEYS holds the keys of encrypted tasks.
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

/** Validates the file (with overrides) against every section's schema, then has each owner resolve its section. */
export function resolveConfig(params: {
  root: string;
  file: string;
  data: unknown;
  env: NodeJS.ProcessEnv;
  overrides?: ConfigOverrides | undefined;
}): JfastConfig {
  const { file, env } = params;
  const merged = params.overrides ? deepMerge(params.data, params.overrides) : params.data;
  refuseRenamedPlugins(merged, file);
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) throw configIssue(file, parsed.error);
  const raw = parsed.data;
  const { enabled, disabled } = enabledPlugins(raw, env);
  refusePluginConflicts({ raw, enabled, disabled, file });

  refuseKafkaLagWithoutKafka(raw.alerts, { file, kafka: enabled.has("kafka") ? "configured" : raw.plugins.enabled.includes("kafka") ? "turned-off" : "absent" });
  const at = { file, env };
  const database = enabled.has("database") ? resolveDatabase(raw.plugin.database, at) : null;
  const queue = enabled.has("queue") ? resolveQueue(raw.plugin.queue, { ...at, queues: raw.queues }) : null;
  const environment = raw.service.environment ?? environmentOf(env);
  const production = environment === "production";
  const service = { name: raw.service.name, basePort: raw.service.base_port, environment };
  return {
    root: params.root,
    file,
    service,
    plugins: enabled,
    disabledPlugins: new Set([...disabled].filter((name) => raw.plugins.enabled.includes(name))),
    port: portOf(env.PORT, raw.service.base_port),
    host: env.HOST?.trim() || (production ? null : "127.0.0.1"),
    encryption: { keys: parseEncryptionKeys(env.JFAST_ENCRYPTION_KEYS) },
    database,
    queue,
    outbox: enabled.has("outbox") ? resolveOutbox(raw.plugin.outbox) : null,
    ...resolveObservability(raw.plugin.observability, { production }),
    kafka: enabled.has("kafka") ? resolveKafka(raw.plugin.kafka, { ...at, service }) : null,
    telemetry: enabled.has("telemetry") ? resolveTelemetry(raw.plugin.telemetry, { service }) : null,
    http: resolveHttp(raw.http, { production }),
    admin: resolveAdmin(raw.admin, at),
    alerts: resolveAlerting(raw.alerts, raw.alerting, at),
  };
}

function environmentOf(env: NodeJS.ProcessEnv): JfastConfig["service"]["environment"] {
  if (env.JFAST_ENV === "production" || env.NODE_ENV === "production") return "production";
  if (env.JFAST_ENV === "test" || env.NODE_ENV === "test") return "test";
  return "development";
}

/** PORT, else `[service] base_port`. */
function portOf(text: string | undefined, basePort: number): number {
  if (text === undefined || text === "") return basePort;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new ConfigError(`PORT="${text}" is not a port number`, { hint: "set PORT to a whole number between 1 and 65535, or unset it to use [service] base_port", docs: DOCS });
  }
  return value;
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
