import type { Histogram } from "./latency-histogram.js";

/**
 * Jobs processed (completed), failed (an attempt that threw or timed out, retried or not) and dead (dead-lettered)
 * per minute and task, with histograms of each attempt's run time and wait (available → started), as the workers
 * of every process report them (queue/throughput-recorder.ts). Each flush writes every row twice: into its minute
 * (kept 24 hours) and into its hour (kept 7 days), so no roll-up runs and a 7-day read is 168 rows per task.
 * Where: the database when the plugin is on (jfast_stats, migration 0029), else the Redis queue's own keys (a
 * hash per minute and per hour with a TTL), else memory (docs/observability.md#run-and-wait-time-history).
 */
export interface ThroughputCounts {
  processed: number;
  failed: number;
  dead: number;
}

export interface ThroughputRow extends ThroughputCounts {
  /** Epoch ms of the start of the minute (UTC). */
  minute: number;
  task: string;
  /** Run time of the attempts that ended in the minute, ms (core/latency-histogram.ts); absent: none recorded. */
  run?: Histogram;
  /** Their wait, from when the job was due to when the attempt started, ms. */
  wait?: Histogram;
}

export const StatsSpan = { minute: "minute", hour: "hour" } as const;
export type StatsSpan = (typeof StatsSpan)[keyof typeof StatsSpan];

/** One task's counts and histograms over one minute or hour. */
export interface StatsRow extends ThroughputCounts {
  /** Epoch ms of the start of the minute or hour. */
  at: number;
  task: string;
  run: Histogram;
  wait: Histogram;
}

export interface ThroughputStore {
  readonly kind: "sql" | "redis" | "memory";
  /** Adds counts and histograms to what is stored for each minute and task, and to their hour. */
  add(rows: ThroughputRow[]): Promise<void>;
  /** Minutes from `from` (epoch ms, inclusive) that have counts, summed over tasks or of one task. */
  read(params: { from: number; task?: string | undefined }): Promise<Array<ThroughputCounts & { minute: number }>>;
  /** Each task's rows of `span` from `from` (epoch ms, inclusive), oldest first; of one task when given. */
  series(params: { from: number; span: StatsSpan; task?: string | undefined }): Promise<StatsRow[]>;
  /** Forgets minutes and hours past their retention (`now` epoch ms); a store with expiring keys does nothing. */
  prune(params: { now: number }): Promise<void>;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
/** Minutes are kept a day, hours 7 days. */
export const MINUTE_RETENTION_MS = 24 * HOUR_MS;
export const THROUGHPUT_RETENTION_MS = 7 * 24 * HOUR_MS;

export function spanMs(span: StatsSpan): number {
  return span === StatsSpan.hour ? HOUR_MS : MINUTE_MS;
}

/** A flush's rows as the store writes them: each minute, and each hour summed over its minutes (one row per hour and task). */
export function minutesAndHours(rows: readonly ThroughputRow[]): Array<StatsRow & { span: StatsSpan }> {
  const out: Array<StatsRow & { span: StatsSpan }> = [];
  const hours = new Map<string, StatsRow & { span: StatsSpan }>();
  for (const row of rows) {
    out.push({ span: StatsSpan.minute, at: row.minute, task: row.task, processed: row.processed, failed: row.failed, dead: row.dead, run: row.run ?? {}, wait: row.wait ?? {} });
    const at = Math.floor(row.minute / HOUR_MS) * HOUR_MS;
    const key = `${at}|${row.task}`;
    let hour = hours.get(key);
    if (!hour) {
      hour = { span: StatsSpan.hour, at, task: row.task, processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
      hours.set(key, hour);
      out.push(hour);
    }
    hour.processed += row.processed;
    hour.failed += row.failed;
    hour.dead += row.dead;
    addBuckets(hour.run, row.run);
    addBuckets(hour.wait, row.wait);
  }
  return out;
}

function addBuckets(into: Histogram, from: Histogram | undefined): void {
  if (!from) return;
  for (const [bucket, count] of Object.entries(from)) into[Number(bucket)] = (into[Number(bucket)] ?? 0) + count;
}
