import { workerState, WorkerState } from "../core/backend/workers.js";
import type { Outbox } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import { scheduleSourceFrom } from "../admin/scheduler-source.js";
import { readStatsLatency } from "../queue/stats-views.js";
import { parseDuration, type AlertRule } from "./config.js";
import type { PromiseChecker } from "./promise.js";
import type { KafkaLagDetail, KafkaLagReader } from "./kafka-lag.js";

/**
 * A rule's value now, in its threshold's unit (docs/alerts.md#rules): dead letters in the window, the percent of
 * attempts that failed in it, seconds the oldest due job has waited, workers online. Null: nothing to judge (no
 * attempt ended in the window of a failure_rate rule, or the queue cannot tell).
 */
export async function evaluateRule(
  queue: QueueProvider,
  rule: AlertRule,
  more: { outbox?: (() => Outbox | null) | undefined; scheduler?: (() => Scheduler | null) | undefined; promises?: PromiseChecker | null | undefined; kafka?: (() => KafkaLagReader | null) | undefined } = {},
): Promise<number | null> {
  const sinceMs = parseDuration(rule.window)!;
  switch (rule.rule) {
    case "dead_letters": {
      const view = await readStatsLatency(queue, { sinceMs, task: rule.task, queue: rule.queue });
      return view.queues.reduce((sum, q) => sum + q.dead, 0);
    }
    case "failure_rate": {
      const view = await readStatsLatency(queue, { sinceMs, task: rule.task, queue: rule.queue });
      // `failed` counts every failed attempt, retried or dead; `completed` the ones that succeeded.
      const failed = view.queues.reduce((sum, q) => sum + q.failed, 0);
      const ended = failed + view.queues.reduce((sum, q) => sum + q.completed, 0);
      return ended === 0 ? null : Math.round((failed / ended) * 10_000) / 100;
    }
    case "queue_latency": {
      const view = await readStatsLatency(queue, { sinceMs: 60_000, task: rule.task, queue: rule.queue });
      const ages = view.queues.map((q) => q.oldestWaitingMs).filter((ms): ms is number => ms !== null);
      return ages.length === 0 ? 0 : Math.max(...ages) / 1000;
    }
    case "workers_below": {
      const queues = [...queue.queues.values()].filter((q) => (rule.queue === undefined || q.name === rule.queue) && q.backend.capabilities.workers);
      if (queues.length === 0) return null;
      const now = Date.now();
      const online = new Set<string>();
      for (const q of queues) {
        for (const record of await q.backend.workerStore().list()) if (workerState(record, now) === WorkerState.online) online.add(record.id);
      }
      return online.size;
    }
    case "outbox_lag": {
      const outbox = more.outbox?.() ?? null;
      if (!outbox) return null;
      const health = await outbox.health();
      // A dead row is a delivery the relay gave up on: it breaks the rule whatever the lag (isFailing reads it).
      deadOutboxRows.set(rule, health.dead);
      return health.lagSeconds;
    }
    case "schedule_late": {
      const scheduler = more.scheduler?.() ?? null;
      if (!scheduler) return null;
      const now = Date.now();
      const running = scheduler.status().schedules.filter((s) => !s.paused && (rule.task === undefined || s.task === rule.task));
      const views = await scheduleSourceFrom(scheduler).describeSchedules({ count: 1 });
      const names = new Set(running.map((s) => s.name));
      // A tick due in the last day that no process claimed breaks the rule whatever the lateness (isFailing reads it).
      missedScheduleTicks.set(rule, views.filter((v) => names.has(v.name)).reduce((sum, v) => sum + v.missedTicks, 0));
      const late = running.map((s) => (s.nextTick === null ? 0 : Math.max(0, now - Date.parse(s.nextTick)) / 1000));
      return late.length === 0 ? 0 : Math.round(Math.max(...late));
    }
    case "kafka_lag": {
      const kafka = more.kafka?.() ?? null;
      // Kafka turned off in this process (JFAST_DISABLE_PLUGINS): the lag cannot be read, and that is said, not judged.
      if (!kafka) throw new Error("this process has no Kafka to read the lag from (the kafka plugin is off here); the rule keeps its state");
      // A broker that is down throws KAFKA_UNAVAILABLE: the alerter logs it and the rule keeps its state.
      const worst = await kafka.read(rule.topic);
      kafkaLagDetails.set(rule, worst);
      return worst?.lag ?? 0;
    }
    case "promise": {
      // No outbox in this service (a promise made at run time where it cannot be read): said, not judged.
      if (!more.promises) throw new Error(`alert "${rule.name}" is a promise, and this service has no outbox to read its ${rule.when} events from: write it in the service that publishes them (jfast docs alerts#promises)`);
      return (await more.promises.check(rule)).broken;
    }
    default:
      return null;
  }
}

/** The group/topic furthest behind at the last evaluation of a kafka_lag rule (its notification names it). */
const kafkaLagDetails = new WeakMap<AlertRule, KafkaLagDetail | null>();
export function kafkaLagDetailOf(rule: AlertRule): KafkaLagDetail | null {
  return kafkaLagDetails.get(rule) ?? null;
}

/** Dead outbox rows seen by the last evaluation of an outbox_lag rule; missed ticks by a schedule_late rule's. */
const deadOutboxRows = new WeakMap<AlertRule, number>();
const missedScheduleTicks = new WeakMap<AlertRule, number>();

/**
 * True when the value breaks the rule: it reaches the threshold, or (workers_below) falls under it, or (kafka_lag)
 * passes it; outbox_lag also breaks while a dead outbox row exists.
 */
export function isFailing(rule: AlertRule, value: number | null): boolean {
  if (rule.rule === "outbox_lag" && (deadOutboxRows.get(rule) ?? 0) > 0) return true;
  if (rule.rule === "schedule_late" && (missedScheduleTicks.get(rule) ?? 0) > 0) return true;
  if (value === null) return false;
  if (rule.rule === "kafka_lag") return value > rule.threshold;
  return rule.rule === "workers_below" ? value < rule.threshold : value >= rule.threshold;
}
