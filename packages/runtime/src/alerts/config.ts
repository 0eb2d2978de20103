import { z } from "zod";
import { validateTopic } from "../kafka/on.js";
import { ConfigError } from "../errors/jfast-error.js";

/** Every rule the `[[alerts]]` table names (docs/alerts.md#rules). */
export const ALERT_RULES = ["dead_letters", "failure_rate", "queue_latency", "workers_below", "schedule_late", "outbox_lag", "kafka_lag", "promise"] as const;
export type AlertRuleKind = (typeof ALERT_RULES)[number];
/** The rules this version evaluates; the others are refused where they are written. */
export const SUPPORTED_ALERT_RULES = ["dead_letters", "failure_rate", "queue_latency", "workers_below", "outbox_lag", "schedule_late", "kafka_lag", "promise"] as const satisfies readonly AlertRuleKind[];
export const ALERTS_DOCS = "jfast docs alerts";

/** `30s`, `5m`, `1h`, `1d`, `500ms` as ms; null when it is not one. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "ms" | "s" | "m" | "h" | "d"];
  return Math.round(Number(match[1]) * unit);
}

const duration = (what: string, example: string) =>
  z.string().refine((text) => parseDuration(text) !== null, { message: `${what} is a duration such as "${example}" (ms, s, m, h or d)` });

const eventType = (what: string, example: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, { message: `${what} is an event type such as "${example}"` });

const PROMISE_EXAMPLE = 'when = "invoice.paid", then = "shipment.created", within = "5m"';

/** One `[[alerts]]` entry, as written in jfast.toml and as alerts.create takes it. */
export const alertRuleSchema = z
  .strictObject({
    name: z.string().min(1, "name the alert, e.g. name = \"payments dying\"").max(100),
    rule: z.enum(ALERT_RULES, { message: `rule is one of ${ALERT_RULES.join(", ")}` }),
    task: z.string().min(1).max(200).optional(),
    queue: z.string().min(1).max(200).optional(),
    /** kafka_lag only: one topic of the service's `on(...)` handlers, as they write it (without the prefix). */
    topic: z
      .string()
      .refine((topic) => validateTopic(topic) === null, { message: 'topic is a Kafka topic name as on("…") writes it, e.g. topic = "orders"' })
      .optional(),
    threshold: z.number({ message: "threshold is a number: a count, a percent, seconds or workers, by rule" }).min(0),
    window: duration("window", "5m").default("5m"),
    webhook: z
      .string()
      .url("webhook is the URL the alert is posted to, e.g. \"https://hooks.example.com/jfast\"")
      .refine((url) => /^https?:\/\//.test(url), { message: "webhook is an http:// or https:// URL" }),
    /** `json`: jfast's body (docs/alerts.md#the-webhook-body); `slack`: `{ text }`, which Slack's incoming webhooks take. */
    format: z.enum(["json", "slack"], { message: 'format is "json" (the default) or "slack"' }).default("json"),
    /** After a notification, the rule's next change of state waits this long. */
    cooldown: duration("cooldown", "5m").default("1m"),
    /** promise: the event type that makes the promise (docs/alerts.md#promises). */
    when: eventType("when", "invoice.paid").optional(),
    /** promise: the event type that keeps it, published for the same request id. */
    then: eventType("then", "shipment.created").optional(),
    /** promise: how long after `when` the `then` event may come. */
    within: duration("within", "5m").optional(),
  })
  .superRefine((rule, ctx) => {
    if (!(SUPPORTED_ALERT_RULES as readonly string[]).includes(rule.rule)) {
      ctx.addIssue({
        code: "custom",
        path: ["rule"],
        message: `rule "${rule.rule}" is not yet supported; use one of ${SUPPORTED_ALERT_RULES.join(", ")} (see docs/alerts.md#rules)`,
      });
    }
    if (rule.task !== undefined && rule.queue !== undefined) {
      ctx.addIssue({ code: "custom", path: ["queue"], message: "give task or queue, not both (neither: the whole service)" });
    }
    if (rule.rule === "workers_below" && rule.task !== undefined) {
      ctx.addIssue({ code: "custom", path: ["task"], message: "workers_below counts the service's workers, or a queue's: drop task (queue = \"…\" may stay)" });
    }
    if (rule.rule === "outbox_lag" && (rule.task !== undefined || rule.queue !== undefined)) {
      ctx.addIssue({ code: "custom", path: [rule.task !== undefined ? "task" : "queue"], message: "outbox_lag watches the service's outbox as a whole: drop task and queue" });
    }
    if (rule.rule === "promise") {
      for (const field of ["when", "then", "within"] as const) {
        if (rule[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `a promise needs ${field}: ${PROMISE_EXAMPLE} (see docs/alerts.md#promises)` });
      }
      if (rule.when !== undefined && rule.when === rule.then) ctx.addIssue({ code: "custom", path: ["then"], message: `then names the event that keeps the promise made by when: give another event type than "${rule.when}"` });
      if (rule.task !== undefined || rule.queue !== undefined) {
        ctx.addIssue({ code: "custom", path: [rule.task !== undefined ? "task" : "queue"], message: "a promise follows events by request id, not a task or a queue: drop task and queue" });
      }
      if (rule.threshold < 1) ctx.addIssue({ code: "custom", path: ["threshold"], message: "a promise's threshold is the broken requests that fire it, at least 1" });
    } else {
      for (const field of ["when", "then", "within"] as const) {
        if (rule[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: `${field} belongs to rule = "promise" only: drop it, or make the rule a promise` });
      }
    }
    if (rule.rule === "kafka_lag" && (rule.task !== undefined || rule.queue !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [rule.task !== undefined ? "task" : "queue"],
        message: 'kafka_lag watches the service\'s Kafka consumer group (its on(...) handlers), not a task or a queue: drop task and queue (topic = "…" narrows it to one topic)',
      });
    }
    if (rule.rule !== "kafka_lag" && rule.topic !== undefined) {
      ctx.addIssue({ code: "custom", path: ["topic"], message: `topic narrows a kafka_lag rule only: drop it from this ${rule.rule} rule` });
    }
    if (rule.rule === "failure_rate" && rule.threshold > 100) {
      ctx.addIssue({ code: "custom", path: ["threshold"], message: "failure_rate's threshold is a percent, 0 to 100" });
    }
  });

/**
 * `[[alerting.services]]`: the other services a promise follows its requests into, as the dashboard lists them
 * (name and admin URL); the token is read from the environment variable `token_env` names (a viewer token).
 */
const alertingServiceSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/i, 'name is the service\'s name, such as "shipping"'),
  url: z
    .string()
    .url('url is the service\'s base URL, such as "http://shipping.internal:8000"')
    .refine((url) => /^https?:\/\//.test(url), { message: "url is an http:// or https:// URL" }),
  token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'token_env names the environment variable holding a viewer token of that service, such as "SHIPPING_ADMIN_TOKEN"'),
});

/** `[alerting]`: how often rules are evaluated and how hard a webhook is tried. */
export const alertingSchema = z
  .strictObject({
    interval: duration("interval", "15s").default("15s"),
    retries: z.number().int().min(0).max(20).default(5),
    retry_backoff: duration("retry_backoff", "1s").default("1s"),
    timeout: duration("timeout", "10s").default("10s"),
    services: z.array(alertingServiceSchema).default([]),
  })
  .prefault({});

/** Another service's admin API, as a promise reaches it (trace.get, contracts.graph). */
export interface PeerService {
  name: string;
  /** Base URL, without a trailing slash. */
  url: string;
  token: string;
}

export const alertsSchema = z.array(alertRuleSchema).superRefine((rules, ctx) => {
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    if (seen.has(rule.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `two alerts are named "${rule.name}": give each its own name` });
    seen.add(rule.name);
  });
});

export type AlertRuleInput = z.input<typeof alertRuleSchema>;
export type AlertRule = z.output<typeof alertRuleSchema>;

export interface AlertingConfig {
  rules: AlertRule[];
  intervalMs: number;
  retries: number;
  retryBackoffMs: number;
  timeoutMs: number;
  /** The other services a promise follows its requests into (`[[alerting.services]]`, JFAST_ALERTING_SERVICES). */
  services: PeerService[];
}

export function resolveAlerting(
  rules: AlertRule[] | undefined,
  alerting: z.output<typeof alertingSchema> | undefined,
  at: { file: string; env: NodeJS.ProcessEnv } = { file: "jfast.toml", env: {} },
): AlertingConfig {
  const a = alerting ?? alertingSchema.parse({});
  return {
    rules: rules ?? [],
    intervalMs: parseDuration(a.interval)!,
    retries: a.retries,
    retryBackoffMs: parseDuration(a.retry_backoff)!,
    timeoutMs: parseDuration(a.timeout)!,
    services: resolveServices(a.services, at),
  };
}

const SERVICES_EXAMPLE = `JFAST_ALERTING_SERVICES='[{"name":"shipping","url":"http://127.0.0.1:8001","token":"..."}]'`;

/**
 * `[[alerting.services]]` with each token from its environment variable, then JFAST_ALERTING_SERVICES: the same
 * JSON list of { name, url, token } the dashboard takes as JFAST_DASHBOARD_SERVICES (docs/alerts.md#promises).
 */
function resolveServices(declared: z.output<typeof alertingServiceSchema>[], at: { file: string; env: NodeJS.ProcessEnv }): PeerService[] {
  const fail = (message: string, hint: string): never => {
    throw new ConfigError(message, { code: "CONFIG_INVALID", hint, docs: "jfast docs alerts#promises" });
  };
  const services: PeerService[] = declared.map((s) => {
    const token = at.env[s.token_env];
    if (!token) fail(`[[alerting.services]] "${s.name}" in ${at.file} reads its token from ${s.token_env}, which is not set`, `set ${s.token_env} to a viewer token of ${s.name}'s admin API (jfast docs admin-api#tokens)`);
    return { name: s.name, url: s.url.replace(/\/+$/, ""), token: token! };
  });
  const raw = at.env.JFAST_ALERTING_SERVICES;
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      fail(`JFAST_ALERTING_SERVICES is not JSON: ${(error as Error).message}`, `give a JSON list, e.g. ${SERVICES_EXAMPLE}`);
    }
    if (!Array.isArray(parsed)) fail("JFAST_ALERTING_SERVICES is not a JSON list of { name, url, token }", `e.g. ${SERVICES_EXAMPLE}`);
    (parsed as unknown[]).forEach((entry, index) => {
      const { name, url, token } = (entry ?? {}) as { name?: unknown; url?: unknown; token?: unknown };
      if (typeof name !== "string" || !/^[a-z0-9][a-z0-9_-]*$/i.test(name) || typeof url !== "string" || !/^https?:\/\//.test(url) || typeof token !== "string" || token.length === 0) {
        fail(`JFAST_ALERTING_SERVICES entry #${index + 1} is not { name, url, token } with an http(s) url`, `e.g. ${SERVICES_EXAMPLE}`);
      }
      services.push({ name: name as string, url: (url as string).replace(/\/+$/, ""), token: token as string });
    });
  }
  const seen = new Set<string>();
  for (const s of services) {
    if (seen.has(s.name)) fail(`the service "${s.name}" is listed twice among the alerting services`, "list each service once, in [[alerting.services]] or JFAST_ALERTING_SERVICES");
    seen.add(s.name);
  }
  return services;
}
