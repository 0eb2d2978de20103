import type { Job } from "../core/job.js";
import { AttemptOutcome, onAttemptEnded, type JobEvents } from "../core/job-events.js";
import type { Depths, TaskDepths } from "../core/queue-backend.js";
import type { createScrapeRegistry } from "./scrape-registry.js";
import { TaskCounter, TaskHistogram } from "./task-metrics.js";

/** What the counters and histograms are fed, from the job events (core/job-events.ts). */
export interface AttemptObserver {
  /** A job was claimed: its pickup latency is claimedAt − availableAt. */
  claimed(job: Job, claimedAt: number): void;
  /** An attempt ended: `ok` completed, `retry` failed and comes back, `dead` failed for the last time. */
  finished(job: Job, outcome: AttemptOutcome, durationMs: number): void;
}

export { AttemptOutcome };

/**
 * What /metrics reads of the features it watches, no more: the outbox's, the scheduler's, the Kafka bus's and
 * the pruner's own status types are wider and fit these.
 */
export interface OutboxLag {
  pending: number;
  failing: number;
  dead: number;
  lagSeconds: number;
}
export interface ScheduleLag {
  schedules: ReadonlyArray<{ name: string; nextTick: string | null }>;
}
export interface ConsumerLag {
  consumerGroup: string;
  lag: ReadonlyArray<{ topic: string; partition: number; lag: number }>;
}
export interface PrunedCounts {
  /** By queue label, then state. */
  pruned: ReadonlyMap<string, Readonly<Record<string, number>>>;
  /** Epoch ms of the end of the last run, by queue label. */
  lastRunAt: ReadonlyMap<string, number>;
}

/** What /metrics reads on every scrape; each source is optional (its plugin may be off or not started). */
export interface MetricSources {
  backend: () => string | null;
  depths: () => Promise<Depths> | null;
  /** Per task; resolves null where the backend counts only totals (capabilities.perTaskDepths off: RabbitMQ). */
  depthsByTask: () => Promise<TaskDepths | null> | null;
  /** Registered task names: each gets its depth series, zeros included, before its first job. */
  tasks: () => readonly string[];
  outbox: () => Promise<OutboxLag> | null;
  scheduler: () => ScheduleLag | null;
  events: () => Promise<ConsumerLag> | null;
  /** This process's pruner (docs/queues.md#retention); null where none runs. */
  pruner?: () => PrunedCounts | null;
  /**
   * A service with several named queues (docs/queues.md): each one's depths under its own `queue` label (the
   * backend's name for it, so the default queue's series keep theirs). Null or one entry: the sources above.
   */
  queues?: () => ReadonlyArray<{ label: string; depths(): Promise<Depths>; depthsByTask(): Promise<TaskDepths | null>; tasks: readonly string[] }> | null;
}

export interface JfastMetrics extends AttemptObserver {
  /** Prometheus text exposition format. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** prom-client's Registry.PROMETHEUS_CONTENT_TYPE, the text format version 0.0.4 its registry renders. */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * How long one metric's source may take during a scrape. A client of an unreachable server can hold a
 * command for many seconds (retries, reconnects); Prometheus gives a whole scrape 10 s by default.
 */
const COLLECT_TIMEOUT_MS = 3000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Handler durations from a millisecond callback to a long batch job. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Pickup latency: from "woke up at once" to "the queue is far behind". */
const PICKUP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800];

/**
 * Counters and histograms are fed by the worker of this process from the job events, from start-up on; the
 * registry that renders them with the depths and lags (scrape-registry.ts) is made at the first scrape.
 */
export function createMetrics(params: {
  service: string;
  queue: string;
  sources: MetricSources;
  /** The app's job events: the per-attempt counters and histograms listen to them. */
  events?: JobEvents;
}): JfastMetrics {
  const { sources } = params;
  // Two gauges (backlog and lag) read the outbox's health: one read per scrape, so they describe one moment
  // (read separately, a scrape could show rows already dead next to the lag they had while pending).
  let outboxRead: Promise<OutboxLag> | null | undefined;
  const outboxHealth = () => (outboxRead === undefined ? (outboxRead = sources.outbox()) : outboxRead);

  // Fed once or more per attempt: the cheap per-task kinds (task-metrics.ts), same exposition as prom-client's.
  const processed = new TaskCounter({ name: "jfast_jobs_processed_total", help: "Attempts that completed successfully, by task.", labelNames: ["task"] });
  const failed = new TaskCounter({ name: "jfast_jobs_failed_total", help: "Attempts that failed (retried or dead-lettered), by task.", labelNames: ["task"] });
  const dead = new TaskCounter({ name: "jfast_jobs_dead_total", help: "Jobs dead-lettered by this process's workers, by task.", labelNames: ["task"] });
  const duration = new TaskHistogram({
    name: "jfast_job_duration_seconds",
    help: "Handler duration per attempt, by task and outcome.",
    labelNames: ["task", "outcome"],
    buckets: DURATION_BUCKETS,
  });
  const pickup = new TaskHistogram({
    name: "jfast_job_pickup_latency_seconds",
    help: "Time from when a job became available to when a worker started it (claim and any local prefetch buffer included), by task.",
    labelNames: ["task"],
    buckets: PICKUP_BUCKETS,
  });

  let scrape: Promise<ReturnType<typeof createScrapeRegistry>> | null = null;
  const metrics: JfastMetrics = {
    contentType: CONTENT_TYPE,
    async render() {
      scrape ??= import("./scrape-registry.js").then(({ createScrapeRegistry }) =>
        createScrapeRegistry({ service: params.service, queue: params.queue, sources, perAttempt: [processed, failed, dead, duration, pickup], outboxHealth }),
      );
      const { registry, collectFailed } = await scrape;
      // One failing source must not hide the others: while the queue's backend is down, the outbox and
      // scheduler lags and this process's counters are what an operator needs to see.
      outboxRead = undefined;
      const names = registry.getMetricsAsArray().map((metric) => metric.name).filter((name) => name !== "jfast_metrics_collect_failed");
      const failedNames: string[] = [];
      const texts = await Promise.all(
        names.map((name) =>
          withTimeout(registry.getSingleMetricAsString(name), COLLECT_TIMEOUT_MS).catch(() => {
            failedNames.push(name);
            return null;
          }),
        ),
      );
      collectFailed.reset();
      for (const name of failedNames) collectFailed.set({ metric: name }, 1);
      texts.push(await registry.getSingleMetricAsString("jfast_metrics_collect_failed"));
      return `${texts.filter((text) => text !== null).join("\n\n")}\n`;
    },
    claimed(job, claimedAt) {
      pickup.observe(Math.max(0, claimedAt - job.availableAt.getTime()) / 1000, job.task);
    },
    finished(job, outcome, durationMs) {
      duration.observe(durationMs / 1000, job.task, outcome);
      if (outcome === AttemptOutcome.ok) {
        processed.inc(job.task);
        return;
      }
      failed.inc(job.task);
      if (outcome === AttemptOutcome.dead) dead.inc(job.task);
    },
  };
  if (params.events) {
    params.events.on("job:claimed", (e) => metrics.claimed(e.job, e.claimedAt));
    onAttemptEnded(params.events, (e, outcome) => metrics.finished(e.job, outcome, e.durationMs));
  }
  return metrics;
}
