import type { AlertState } from "./alert-store.js";
import type { AlertRule } from "./config.js";
import type { KafkaLagDetail } from "./kafka-lag.js";
import { HOP_WORDS, type BrokenPromise } from "./promise.js";

/** The JSON body posted for `format = "json"` (docs/alerts.md#the-webhook-body). */
export interface AlertPayload {
  alert: string;
  rule: AlertRule["rule"];
  state: AlertState;
  /** The rule's value when it changed state, in the threshold's unit; null when there was nothing to judge. */
  value: number | null;
  threshold: number;
  window: string;
  task: string | null;
  queue: string | null;
  service: string;
  environment: string;
  /** When it changed state, ISO. */
  at: string;
  /** kafka_lag only: the rule's topic (null: every topic of the service's `on` handlers). */
  topic?: string | null;
  /** kafka_lag only: the group/topic furthest behind, its lag summed over partitions, and its worst partition. */
  kafka?: KafkaLagDetail | null;
  /** promise only: the promise, how many requests broke it, and the oldest with the hop it is late at (docs/alerts.md#promises). */
  promise?: { when: string; then: string; within: string; broken: number; example: BrokenPromise | null };
  /** One line a person reads: what broke, or that it recovered. */
  text: string;
}

const UNITS: Record<AlertRule["rule"], string> = {
  dead_letters: "dead letters",
  failure_rate: "% of attempts failed",
  queue_latency: "s oldest wait",
  workers_below: "workers online",
  schedule_late: "s late",
  outbox_lag: "s outbox lag",
  kafka_lag: "messages behind",
  promise: "broken requests",
};

export function alertText(p: Omit<AlertPayload, "text">): string {
  const scope = p.task ? `task ${p.task}` : p.queue ? `queue ${p.queue}` : p.topic ? `topic ${p.topic}` : "the service";
  const value = p.value === null ? "no value" : `${p.value}${UNITS[p.rule].startsWith("%") || UNITS[p.rule].startsWith("s ") ? "" : " "}${UNITS[p.rule]}`;
  const head = p.state === "firing" ? "FIRING" : "RESOLVED";
  const limit = p.rule === "workers_below" ? `below ${p.threshold}` : `threshold ${p.threshold}`;
  if (p.promise) return `[${head}] ${p.service}: ${p.alert} — ${promiseText(p.promise, p.value)} (${limit}, window ${p.window})`;
  const worst = p.kafka ? `; worst: group ${p.kafka.group}, topic ${p.kafka.topic} ${p.kafka.lag} behind, partition ${p.kafka.partition} ${p.kafka.partitionLag} behind` : "";
  return `[${head}] ${p.service}: ${p.alert} — ${p.rule} of ${scope} is ${value} (${limit}, window ${p.window})${worst}`;
}

/**
 * The part of a notification that names what is late, kept in the history beside it (docs/alerts.md#history):
 * "request r-1: late at subscriber_job — shipping's job …", "group g, topic t 120 behind, partition 2 80 behind";
 * null when it names nothing (other rules, a recovery, a promise kept).
 */
export function alertDetail(p: Omit<AlertPayload, "text">): string | null {
  if (p.state !== "firing") return null;
  const e = p.promise?.example;
  if (e) return `request ${e.requestId}: late at ${e.hop} — ${e.detail}`;
  if (p.kafka) return `group ${p.kafka.group}, topic ${p.kafka.topic} ${p.kafka.lag} behind, partition ${p.kafka.partition} ${p.kafka.partitionLag} behind`;
  return null;
}

/** "promise invoice.paid → shipment.created within 5m broken for 2 requests; request r-1 is late at …". */
function promiseText(promise: NonNullable<AlertPayload["promise"]>, value: number | null): string {
  const head = `promise ${promise.when} → ${promise.then} within ${promise.within}`;
  const broken = value ?? promise.broken;
  if (broken === 0 || !promise.example) return `${head} kept: ${broken} broken request${broken === 1 ? "" : "s"}`;
  const e = promise.example;
  return `${head} broken for ${broken} request${broken === 1 ? "" : "s"}; request ${e.requestId} is late at ${HOP_WORDS[e.hop]} (${e.service}): ${e.detail}`;
}

/** The body to post: jfast's JSON, or `{ text }` for a Slack-compatible incoming webhook. */
export function webhookBody(format: AlertRule["format"], payload: AlertPayload): string {
  return JSON.stringify(format === "slack" ? { text: payload.text } : payload);
}

/**
 * Posts once; resolves on a 2xx, throws otherwise (status and the start of the answer) or on a timeout. A
 * receiver that answers slowly never holds anything but this delivery.
 */
export async function postWebhook(url: string, body: string, timeoutMs: number): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "jfast-alerts" },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const text = (await response.text().catch(() => "")).slice(0, 200);
  throw new Error(`the webhook answered ${response.status}${text ? `: ${text}` : ""}`);
}
