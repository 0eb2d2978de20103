import { maxOf, mergeInto, percentilesOf, type Histogram, type Percentiles } from "../core/latency-histogram.js";
import { ListOrder, ListState } from "../core/backend/admin.js";
import { MINUTE_MS, MINUTE_RETENTION_MS, spanMs, StatsSpan, THROUGHPUT_RETENTION_MS, type StatsRow } from "../core/throughput.js";
import { NotSupportedError } from "../errors/jfast-error.js";
import { STATS_DOCS } from "./queue-control.js";
import type { NamedQueue, QueueProvider } from "./queue-provider.js";

/**
 * The run-time and wait history as the admin API (`stats.latency`, `stats.series`), `jfast stats` and the
 * dashboard read it (docs/observability.md#run-and-wait-time-history): one implementation for all three.
 * Up to a day is read from the minutes, longer from the hours (at most 7 days).
 */
export type { Percentiles } from "../core/latency-histogram.js";

export interface TaskLatency {
  task: string;
  queue: string;
  completed: number;
  failed: number;
  dead: number;
  runMs: Percentiles;
  waitMs: Percentiles;
}

export interface QueueLatency extends Omit<TaskLatency, "task"> {
  /** How long the oldest job due now has waited, ms, read from the queue now; null when none waits or it cannot tell. */
  oldestWaitingMs: number | null;
}

export interface StatsLatencyView {
  /** The window, ms back from now. */
  sinceMs: number;
  span: StatsSpan;
  /** Per task, busiest first. */
  tasks: TaskLatency[];
  /** Per named queue, over all its tasks. */
  queues: QueueLatency[];
  stored: "sql" | "redis" | "memory";
}

export interface StatsPoint {
  /** Start of the minute or hour, ISO. */
  at: string;
  completed: number;
  failed: number;
  dead: number;
  runMs: Percentiles;
  waitMs: Percentiles;
  /** The longest wait of the attempts started in it (the upper bound of its highest bucket), ms. */
  waitMaxMs: number | null;
}

export interface StatsSeriesView {
  sinceMs: number;
  span: StatsSpan;
  /** One point per minute or hour, oldest first, zero-filled; the last is still counting. */
  points: StatsPoint[];
  stored: "sql" | "redis" | "memory";
}

export const MAX_STATS_SINCE_MS = THROUGHPUT_RETENTION_MS;

/** Minutes for a window up to a day, hours beyond. */
export function spanFor(sinceMs: number): StatsSpan {
  return sinceMs <= MINUTE_RETENTION_MS ? StatsSpan.minute : StatsSpan.hour;
}

/** Why the history cannot be read (no queue in scope has a store: RabbitMQ without the database), or null. */
export function statsUnsupported(provider: QueueProvider, queue?: string): NotSupportedError | null {
  const named = queuesOf(provider, queue);
  if (named.length === 0 || named.some((q) => q.throughput)) return null;
  return new NotSupportedError(`the ${named[0]!.backend.kind} queue has no shared place to keep throughput, run-time and wait history`, {
    hint: `enable the "database" plugin: every process then adds its minutes to jfast_stats`,
    docs: STATS_DOCS,
  });
}

function queuesOf(provider: QueueProvider, queue: string | undefined): NamedQueue[] {
  const all = [...provider.queues.values()];
  return queue === undefined ? all : all.filter((q) => q.name === queue);
}

function windowOf(sinceMs: number): { span: StatsSpan; from: number; now: number } {
  const span = spanFor(sinceMs);
  const step = spanMs(span);
  const now = Date.now();
  const current = Math.floor(now / step) * step;
  // A window of N minutes is the current minute and the N - 1 before it.
  return { span, now, from: current - (Math.max(1, Math.round(sinceMs / step)) - 1) * step };
}

export async function readStatsLatency(provider: QueueProvider, params: { sinceMs: number; task?: string | undefined; queue?: string | undefined }): Promise<StatsLatencyView> {
  const unsupported = statsUnsupported(provider, params.queue);
  if (unsupported) throw unsupported;
  const { span, from, now } = windowOf(params.sinceMs);
  const tasks: TaskLatency[] = [];
  const queues: QueueLatency[] = [];
  let stored: StatsLatencyView["stored"] = "memory";
  for (const named of queuesOf(provider, params.queue)) {
    if (!named.throughput) continue;
    stored = named.throughput.store.kind;
    const rows = await named.throughput.store.series({ from, span, task: params.task });
    const byTask = new Map<string, StatsRow>();
    const all: StatsRow = { at: from, task: "", processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
    for (const row of rows) {
      let sum = byTask.get(row.task);
      if (!sum) {
        sum = { at: from, task: row.task, processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
        byTask.set(row.task, sum);
      }
      for (const into of [sum, all]) add(into, row);
    }
    for (const sum of byTask.values()) tasks.push({ task: sum.task, queue: named.name, ...summary(sum) });
    queues.push({ queue: named.name, ...summary(all), oldestWaitingMs: await oldestWaiting(named, params.task, now) });
  }
  tasks.sort((a, b) => b.completed + b.failed - (a.completed + a.failed) || a.task.localeCompare(b.task));
  return { sinceMs: params.sinceMs, span, tasks, queues, stored };
}

export async function readStatsSeries(provider: QueueProvider, params: { sinceMs: number; task?: string | undefined; queue?: string | undefined }): Promise<StatsSeriesView> {
  const unsupported = statsUnsupported(provider, params.queue);
  if (unsupported) throw unsupported;
  const { span, from } = windowOf(params.sinceMs);
  const step = spanMs(span);
  const byAt = new Map<number, StatsRow>();
  let stored: StatsSeriesView["stored"] = "memory";
  for (const named of queuesOf(provider, params.queue)) {
    if (!named.throughput) continue;
    stored = named.throughput.store.kind;
    for (const row of await named.throughput.store.series({ from, span, task: params.task })) {
      let sum = byAt.get(row.at);
      if (!sum) {
        sum = { at: row.at, task: "", processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
        byAt.set(row.at, sum);
      }
      add(sum, row);
    }
  }
  const count = Math.max(1, Math.round(params.sinceMs / step));
  const points = Array.from({ length: count }, (_, i) => {
    const at = from + i * step;
    const row = byAt.get(at) ?? { at, task: "", processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
    return { at: new Date(at).toISOString(), ...summary(row), waitMaxMs: maxOf(row.wait) };
  });
  return { sinceMs: params.sinceMs, span, points, stored };
}

function add(into: StatsRow, row: StatsRow): void {
  into.processed += row.processed;
  into.failed += row.failed;
  into.dead += row.dead;
  mergeInto(into.run, row.run);
  mergeInto(into.wait, row.wait);
}

function summary(row: { processed: number; failed: number; dead: number; run: Histogram; wait: Histogram }) {
  return { completed: row.processed, failed: row.failed, dead: row.dead, runMs: percentilesOf(row.run), waitMs: percentilesOf(row.wait) };
}

/** The oldest ready job by the ready listing's own index (one row); null where the backend cannot list it. */
async function oldestWaiting(named: NamedQueue, task: string | undefined, now: number): Promise<number | null> {
  try {
    const page = await named.backend.listJobs({ state: ListState.ready, order: ListOrder.oldest, limit: 1, task });
    const due = page.rows[0]?.job.availableAt;
    return due ? Math.max(0, now - Date.parse(due)) : null;
  } catch {
    return null;
  }
}

/** `24h`, `90m`, `7d`, `3600s` as ms; null when it is not one. */
export function parseSince(text: string): number | null {
  const match = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1000, m: MINUTE_MS, h: 60 * MINUTE_MS, d: 24 * 60 * MINUTE_MS }[match[2] as "s" | "m" | "h" | "d"];
  const ms = Number(match[1]) * unit;
  return ms > 0 ? ms : null;
}
