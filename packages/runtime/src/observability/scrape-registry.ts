import { Counter, Gauge, Registry } from "prom-client";
import type { Depths } from "../core/queue-backend.js";
import type { MetricSources, OutboxLag } from "./metrics.js";
import type { TaskCounter, TaskHistogram } from "./task-metrics.js";

const ZERO_DEPTHS: Depths = { ready: 0, scheduled: 0, running: 0, dead: 0 };

/**
 * The registry /metrics renders, made at the first scrape: prom-client (and the OpenTelemetry API it loads)
 * stays out of start-up and out of a process nobody scrapes. One registry per jfast instance (not prom-client's
 * global one), so two apps in a process, or in a test, never count into each other. The per-attempt counters
 * and histograms are the worker's, counted since start-up; depths, lags and Kafka consumer lag are read from
 * their providers on each scrape.
 */
export function createScrapeRegistry(params: {
  service: string;
  queue: string;
  sources: MetricSources;
  perAttempt: ReadonlyArray<TaskCounter | TaskHistogram>;
  /** One outbox read per scrape, shared by the two gauges that use it. */
  outboxHealth: () => Promise<OutboxLag> | null;
}): { registry: Registry; collectFailed: Gauge } {
  const registry = new Registry();
  registry.setDefaultLabels({ service: params.service });
  const { sources, outboxHealth } = params;
  for (const metric of params.perAttempt) registry.registerMetric(metric as never);

  new Gauge({
    name: "jfast_queue_depth",
    help: "Jobs in the queue by task and state (ready, scheduled, running, dead), read from the backend at scrape time; task is empty where the backend counts only totals (RabbitMQ).",
    labelNames: ["queue", "backend", "task", "state"],
    registers: [registry],
    async collect() {
      const named = sources.queues?.() ?? null;
      const queues =
        named && named.length > 1
          ? named
          : [{ label: params.queue, depths: () => sources.depths(), depthsByTask: () => sources.depthsByTask(), tasks: sources.tasks() }];
      const backend = sources.backend() ?? "unknown";
      const counted = await Promise.all(
        queues.map(async (queue) => {
          const pending = queue.depthsByTask();
          if (!pending) return null;
          const perTask = await pending;
          const totals = perTask ? null : await queue.depths();
          const byTask = perTask ?? (totals ? { tasks: { "": totals }, exact: true } : null);
          return { queue, byTask };
        }),
      );
      if (counted.every((c) => c === null)) return;
      this.reset();
      for (const entry of counted) {
        if (!entry?.byTask) continue;
        const { queue, byTask } = entry;
        const tasks = { ...(byTask.tasks[""] ? {} : Object.fromEntries(queue.tasks.map((t) => [t, ZERO_DEPTHS]))), ...byTask.tasks };
        for (const [task, depths] of Object.entries(tasks)) {
          for (const state of ["ready", "scheduled", "running", "dead"] as const) {
            this.set({ queue: queue.label, backend, task, state }, depths[state]);
          }
        }
      }
    },
  });
  new Gauge({
    name: "jfast_outbox_lag_seconds",
    help: "Age of the oldest outbox row the relay has not delivered yet (0 when none).",
    registers: [registry],
    async collect() {
      const pending = outboxHealth();
      if (!pending) return;
      this.set((await pending).lagSeconds);
    },
  });
  new Gauge({
    name: "jfast_outbox_pending",
    help: "Outbox rows waiting for the relay, and dead outbox rows.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const pending = outboxHealth();
      if (!pending) return;
      const health = await pending;
      this.set({ state: "pending" }, health.pending);
      this.set({ state: "failing" }, health.failing);
      this.set({ state: "dead" }, health.dead);
    },
  });
  new Gauge({
    name: "jfast_scheduler_tick_lag_seconds",
    help: "How far past its due time each schedule's next tick is (0 when on time), in this process's scheduler.",
    labelNames: ["schedule"],
    registers: [registry],
    collect() {
      const status = sources.scheduler();
      if (!status) return;
      this.reset();
      const now = Date.now();
      for (const schedule of status.schedules) {
        const due = schedule.nextTick ? Date.parse(schedule.nextTick) : NaN;
        this.set({ schedule: schedule.name }, Number.isFinite(due) ? Math.max(0, (now - due) / 1000) : 0);
      }
    },
  });
  new Gauge({
    name: "jfast_kafka_consumer_lag",
    help: "Messages between the consumer group's committed offset and the partition end, by topic, partition and group.",
    labelNames: ["topic", "partition", "group"],
    registers: [registry],
    async collect() {
      const pending = sources.events();
      if (!pending) return;
      this.reset();
      const health = await pending;
      for (const lag of health.lag) this.set({ topic: lag.topic, partition: String(lag.partition), group: health.consumerGroup }, lag.lag);
    },
  });

  new Counter({
    name: "jfast_pruned_jobs_total",
    help: "Finished jobs this process's pruner deleted, by queue and state (completed, dead, cancelled, expired); one process prunes a queue at a time.",
    labelNames: ["queue", "state"],
    registers: [registry],
    collect() {
      const status = sources.pruner?.();
      if (!status) return;
      this.reset();
      for (const [queue, counts] of status.pruned) {
        for (const [state, count] of Object.entries(counts)) this.inc({ queue, state }, count);
      }
    },
  });
  new Gauge({
    name: "jfast_pruner_last_run_timestamp_seconds",
    help: "When this process's pruner last finished a run on the queue (Unix time); absent until it wins the queue's lease once.",
    labelNames: ["queue"],
    registers: [registry],
    collect() {
      const status = sources.pruner?.();
      if (!status) return;
      this.reset();
      for (const [queue, at] of status.lastRunAt) this.set({ queue }, at / 1000);
    },
  });

  // Set by render() from how the collection of every other metric went; it has no source of its own.
  const collectFailed = new Gauge({
    name: "jfast_metrics_collect_failed",
    help: "1 for each metric whose source failed during this scrape (the backend, the database or Kafka unreachable); that metric is left out of the scrape.",
    labelNames: ["metric"],
    registers: [registry],
  });

  return { registry, collectFailed };
}
