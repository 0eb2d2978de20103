import { randomUUID } from "node:crypto";
import { ConfigError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { Outbox } from "../outbox/outbox.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { AlertEvent, AlertState, AlertStatus, AlertStore } from "./alert-store.js";
import { parseDuration, type AlertingConfig, type AlertRule } from "./config.js";
import { evaluateRule, isFailing, kafkaLagDetailOf } from "./evaluate.js";
import { createKafkaLagReader, type KafkaLagReader, type KafkaLagSource } from "./kafka-lag.js";
import { notEnabled, promiseReportOf, type PromiseChecker } from "./promise.js";
import { alertDetail, alertText, postWebhook, webhookBody, type AlertPayload } from "./webhook.js";

/** One rule as alerts.list shows it. */
export interface AlertView {
  rule: AlertRule;
  /** `config`: written in jfast.toml (read-only at run time); `runtime`: made through the admin API. */
  source: "config" | "runtime";
  state: AlertState | "ok";
  changedAt: number | null;
  value: number | null;
  updatedBy: string | null;
}

export interface Alerter {
  readonly store: AlertStore;
  readonly declared: readonly AlertRule[];
  /** Every rule, jfast.toml's then the run-time ones. */
  rules(): Promise<{ rule: AlertRule; source: "config" | "runtime"; updatedBy: string | null }[]>;
  list(): Promise<AlertView[]>;
  /**
   * Why this service cannot evaluate the rule (a kafka_lag rule without Kafka, or of a topic it does not consume; a
   * promise without the outbox), with the fix; null when it can.
   */
  refusal(rule: AlertRule): string | null;
  /** One evaluation now, if this process wins the lease; false when another process holds it. */
  runOnce(): Promise<boolean>;
  /** Deliveries still being tried by this process. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The alerts evaluator (docs/alerts.md). Every process that runs background work starts one; each pass claims the
 * store's lease and only its holder evaluates, so N processes send one notification. A rule's state lives in
 * the store: a change (ok → firing, firing → resolved) is recorded in the history, then posted to its webhook,
 * retried with backoff, and the outcome (delivered, or failed with its error) written on the same entry. The
 * deliveries run beside the passes, never on a queue's path.
 */
export function createAlerter(params: {
  config: AlertingConfig;
  store: AlertStore;
  queue: QueueProvider;
  service: { name: string; environment: string };
  logger: Logger;
  /** The service's outbox, once started (outbox_lag). */
  outbox?: () => Outbox | null;
  /** The scheduler of this process, once started (schedule_late). */
  scheduler?: () => Scheduler | null;
  /**
   * The service's Kafka consumers (kafka_lag): its group and the topics of its `on` handlers; "off" when the kafka
   * plugin is turned off in this process only; null when the service has no Kafka.
   */
  kafka?: KafkaLagSource | "off" | null;
  /** Evaluates promise rules (docs/alerts.md#promises); null where the service lacks the outbox or Kafka. */
  promises?: PromiseChecker | null;
  /** Without `promises`: the plugins a promise needs that the service does not enable, named when one is refused. */
  promisesMissing?: readonly string[];
  /** false: no timer (tests, tools); runOnce() still evaluates. */
  timer?: boolean;
}): Alerter {
  const { config, store, queue, service, logger } = params;
  const owner = `alerts-${randomUUID()}`;
  const inflight = new Set<Promise<void>>();
  const delivering = new Set<string>();
  // The longest a delivery can take, every retry included; a pending entry older than this has no one delivering it.
  const deliveryBoundMs = (config.retries + 1) * config.timeoutMs + config.retryBackoffMs * (2 ** config.retries - 1) + 2 * config.intervalMs;
  let stopped = false;
  let chain: Promise<unknown> = Promise.resolve();
  // One admin client for every kafka_lag rule, made at the first read, closed by stop().
  const kafkaSource = params.kafka ?? null;
  let kafkaReader: KafkaLagReader | null = null;
  const kafka = () => (kafkaSource && kafkaSource !== "off" ? (kafkaReader ??= createKafkaLagReader(kafkaSource, logger)) : null);
  // Why each rule could not be evaluated at its last pass: said once when it starts, not at every pass.
  const failures = new Map<string, string>();

  function refusal(rule: AlertRule): string | null {
    if (rule.rule === "promise") {
      if (params.promises) return null;
      const missing = params.promisesMissing ?? [];
      const lacks = missing.length > 0 ? `${notEnabled(missing)} here` : "this service has no outbox to read them from";
      return `alert "${rule.name}" is a promise, which follows the ${rule.when} events through the outbox to Kafka, and ${lacks}: make it in the service that publishes ${rule.when} through its outbox to Kafka (jfast docs alerts#promises)`;
    }
    if (rule.rule !== "kafka_lag" || kafkaSource === "off") return null;
    if (!kafkaSource) return `alert "${rule.name}" is a kafka_lag rule, and this service has no Kafka: configure [plugin.kafka]`;
    const consumed = [...new Set(kafkaSource.topics)].sort();
    if (consumed.length === 0) return `alert "${rule.name}" watches the lag of this service's on(...) handlers, and it declares none: add one, or remove the alert`;
    if (rule.topic !== undefined && !consumed.includes(rule.topic)) {
      return `alert "${rule.name}" watches topic "${rule.topic}", which no on(...) handler of this service consumes: use one of ${consumed.map((t) => `"${t}"`).join(", ")}`;
    }
    return null;
  }
  for (const rule of config.rules) {
    const refused = refusal(rule);
    if (!refused) continue;
    void store.close().catch(() => undefined);
    throw new ConfigError(`[[alerts]] ${refused.replace(/^alert /, "")}`, { code: "CONFIG_INVALID", docs: "jfast docs alerts#rules" });
  }

  async function rules() {
    const runtime = await store.rules().catch((error: unknown) => {
      logger.warn("reading alert rules made at run time failed; the rules of jfast.toml still run", { error });
      return [];
    });
    const declaredNames = new Set(config.rules.map((r) => r.name));
    return [
      ...config.rules.map((rule) => ({ rule, source: "config" as const, updatedBy: null })),
      ...runtime.filter((r) => !declaredNames.has(r.rule.name)).map((r) => ({ rule: r.rule, source: "runtime" as const, updatedBy: r.updatedBy })),
    ];
  }

  async function deliver(event: AlertEvent & { payload: AlertPayload; format: AlertRule["format"] }): Promise<void> {
    const body = webhookBody(event.format, event.payload);
    let lastError: string | null = null;
    for (let attempt = 1; attempt <= config.retries + 1; attempt++) {
      try {
        await postWebhook(event.webhook, body, config.timeoutMs);
        await store.updateDelivery({ id: event.id, delivery: "delivered", attempts: attempt, lastError, deliveredAt: Date.now() });
        return;
      } catch (error) {
        lastError = (error as Error).message;
        const last = attempt > config.retries;
        await store.updateDelivery({ id: event.id, delivery: last ? "failed" : "pending", attempts: attempt, lastError, deliveredAt: null }).catch(() => undefined);
        if (last) {
          logger.error("an alert's webhook failed after every retry; the alert stays in the history as failed", { alert: event.alert, state: event.state, attempts: attempt, error: lastError });
          return;
        }
        if (stopped) {
          // Never left pending without a word: a stopping process says what became of it.
          await store.updateDelivery({ id: event.id, delivery: "failed", attempts: attempt, lastError: `${lastError}; the process stopped before the next retry`, deliveredAt: null }).catch(() => undefined);
          logger.error("an alert's webhook failed and the process stopped before the next retry", { alert: event.alert, state: event.state, error: lastError });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, config.retryBackoffMs * 2 ** (attempt - 1)).unref());
      }
    }
  }

  async function change(rule: AlertRule, state: AlertState, value: number | null, now: number): Promise<void> {
    await store.setStatus({ name: rule.name, state, changedAt: now, value });
    const base = {
      alert: rule.name,
      rule: rule.rule,
      state,
      value,
      threshold: rule.threshold,
      window: rule.window,
      task: rule.task ?? null,
      queue: rule.queue ?? null,
      service: service.name,
      environment: service.environment,
      at: new Date(now).toISOString(),
      ...(rule.rule === "promise" ? { promise: promiseBody(rule) } : {}),
      ...(rule.rule === "kafka_lag" ? { topic: rule.topic ?? null, kafka: kafkaLagDetailOf(rule) } : {}),
    };
    const payload: AlertPayload = { ...base, text: alertText(base) };
    const example = state === "firing" ? (base.promise?.example ?? null) : null;
    const entry = {
      alert: rule.name,
      rule: rule.rule,
      state,
      value,
      threshold: rule.threshold,
      at: now,
      webhook: rule.webhook,
      delivery: "pending" as const,
      attempts: 0,
      lastError: null,
      deliveredAt: null,
      detail: alertDetail(base),
      example: example ? { requestId: example.requestId, hop: example.hop, service: example.service } : null,
    };
    const id = await store.record(entry);
    logger.warn(payload.text, { alert: rule.name, state });
    delivering.add(id);
    const sending = deliver({ ...entry, id, payload, format: rule.format })
      .catch((error: unknown) => logger.error("recording an alert delivery failed", { alert: rule.name, error }))
      .finally(() => delivering.delete(id));
    inflight.add(sending);
    void sending.finally(() => inflight.delete(sending));
  }

  function promiseBody(rule: AlertRule): NonNullable<AlertPayload["promise"]> {
    const report = promiseReportOf(rule);
    return { when: rule.when!, then: rule.then!, within: rule.within!, broken: report?.broken ?? 0, example: report?.example ?? null };
  }

  async function judge(rule: AlertRule, status: AlertStatus | undefined, now: number): Promise<void> {
    const value = await evaluateRule(queue, rule, { outbox: params.outbox, scheduler: params.scheduler, promises: params.promises, kafka });
    const failing = isFailing(rule, value);
    const current: AlertState | "ok" = status?.state ?? "ok";
    const wanted: AlertState | "ok" = failing ? "firing" : current === "ok" ? "ok" : "resolved";
    if (wanted === current || (wanted === "resolved" && current === "resolved")) return;
    // A change within the cool-down of the last one waits: a flapping rule notifies once per cool-down.
    if (status && now - status.changedAt < parseDuration(rule.cooldown)!) return;
    await change(rule, wanted as AlertState, value, now);
  }

  /** A delivery whose process died (killed mid-retry) stays pending: past every retry's time, it is recorded failed, and said. */
  async function orphans(now: number): Promise<void> {
    for (const event of await store.history({ limit: 100 })) {
      if (event.delivery !== "pending" || delivering.has(event.id) || now - event.at < deliveryBoundMs) continue;
      const lastError = `the process delivering it stopped after ${event.attempts} attempt(s)${event.lastError ? `; last error: ${event.lastError}` : ""}`;
      await store.updateDelivery({ id: event.id, delivery: "failed", attempts: event.attempts, lastError, deliveredAt: null });
      logger.error("an alert's delivery was left pending by a process that stopped; recorded as failed", { alert: event.alert, state: event.state });
    }
  }

  async function pass(): Promise<boolean> {
    // A service without rules reads the run-time ones (one read) and nothing else.
    const all = await rules();
    if (all.length === 0) return false;
    if (!(await store.claimLease({ owner, ttlMs: Math.max(config.intervalMs * 2, 5_000) }))) return false;
    const statuses = await store.statuses();
    const now = Date.now();
    for (const { rule } of all) {
      if (stopped) break;
      try {
        await judge(rule, statuses.get(rule.name), now);
        if (failures.delete(rule.name)) logger.info(`alert "${rule.name}" is evaluated again`, { alert: rule.name });
      } catch (error) {
        // The rule keeps its state (a Kafka that is down neither fires nor resolves it); the next pass tries again.
        const message = (error as Error).message;
        if (failures.get(rule.name) === message) logger.debug("evaluating an alert failed again", { alert: rule.name, error });
        else logger.warn(`alert "${rule.name}" could not be evaluated; it keeps its state and the next pass tries again`, { alert: rule.name, error });
        failures.set(rule.name, message);
      }
    }
    await orphans(now).catch((error: unknown) => logger.warn("checking alert deliveries left pending failed", { error }));
    return true;
  }

  function runOnce(): Promise<boolean> {
    const run = chain.catch(() => undefined).then(pass);
    chain = run;
    return run;
  }

  let ticking = false;
  const timer =
    params.timer === false
      ? null
      : setInterval(() => {
          if (ticking || stopped) return;
          ticking = true;
          void runOnce()
            .catch((error: unknown) => logger.warn("an alerts pass failed; the next one tries again", { error }))
            .finally(() => (ticking = false));
        }, config.intervalMs);
  timer?.unref();

  return {
    store,
    declared: config.rules,
    rules,
    async list() {
      const [all, statuses] = await Promise.all([rules(), store.statuses()]);
      return all.map(({ rule, source, updatedBy }) => {
        const status = statuses.get(rule.name);
        return { rule, source, updatedBy, state: status?.state ?? "ok", changedAt: status?.changedAt ?? null, value: status?.value ?? null };
      });
    },
    refusal,
    runOnce,
    async settled() {
      while (inflight.size > 0) await Promise.all([...inflight]);
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await chain.catch(() => undefined);
      while (inflight.size > 0) await Promise.all([...inflight]);
      await store.releaseLease({ owner }).catch(() => undefined);
      await kafkaReader?.close();
      await store.close();
    },
  };
}
