import { mergeInto, observe } from "../core/latency-histogram.js";
import { MINUTE_MS, type ThroughputCounts, type ThroughputRow, type ThroughputStore } from "../core/throughput.js";
import type { Job } from "../core/job.js";
import type { Logger } from "../observability/logger.js";
import type { AttemptOutcome } from "../core/job-events.js";

/** How often a process adds its counts to the store. */
export const THROUGHPUT_FLUSH_MS = 5000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** Minutes and tasks kept in memory while the store cannot be written, beyond which the oldest are dropped. */
const MAX_PENDING = 10_000;

/**
 * Counts each attempt's outcome per minute and task in memory (from the job events), with histograms of its run
 * time and of its wait (due → started), and adds them to the store every THROUGHPUT_FLUSH_MS and on close, in
 * one write per flush whatever the job rate: nothing is written per job. Counts that cannot be written are kept
 * for the next flush (bounded). Also prunes the store hourly.
 */
export class ThroughputRecorder {
  readonly store: ThroughputStore;
  private readonly logger: Logger;
  private pending = new Map<string, ThroughputRow>();
  /** Each task's pending row of the current minute (no key to build per attempt); emptied when the minute turns or a flush takes the rows. */
  private current = new Map<string, ThroughputRow>();
  private minuteEnd = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private failing = false;

  constructor(params: { store: ThroughputStore; logger: Logger }) {
    this.store = params.store;
    this.logger = params.logger;
  }

  /** An attempt ended after running `durationMs` (absent: not timed, as for a job of an unknown task). */
  finished(job: Job, outcome: AttemptOutcome, durationMs?: number): void {
    const row = this.rowOf(job.task, Date.now());
    if (outcome === "ok") row.processed++;
    else {
      row.failed++;
      if (outcome === "dead") row.dead++;
    }
    if (durationMs !== undefined) observe(row.run!, durationMs);
  }

  /** An attempt starts now: its wait is from when the job was due (claimed late or not) to now. */
  started(job: Job): void {
    const now = Date.now();
    observe(this.rowOf(job.task, now).wait!, Math.max(0, now - job.availableAt.getTime()));
  }

  private rowOf(task: string, now: number): ThroughputRow {
    if (now >= this.minuteEnd || now < this.minuteEnd - MINUTE_MS) {
      this.minuteEnd = (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS;
      this.current.clear();
    }
    let row = this.current.get(task);
    if (!row) {
      const minute = this.minuteEnd - MINUTE_MS;
      const key = `${minute}|${task}`;
      row = this.pending.get(key);
      if (!row) {
        row = { minute, task, processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
        this.pending.set(key, row);
      }
      this.current.set(task, row);
    }
    return row;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), THROUGHPUT_FLUSH_MS);
    this.timer.unref();
  }

  /** Stops the timer and writes what is counted. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    const rows = [...this.pending.values()];
    this.pending = new Map();
    this.current.clear();
    try {
      if (rows.length > 0) await this.store.add(rows);
      if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
        this.lastPrune = Date.now();
        await this.store.prune({ now: Date.now() });
      }
      if (this.failing) this.logger.info("writing throughput counts again", { store: this.store.kind });
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn("cannot write throughput counts; keeping them for the next flush", { error, store: this.store.kind });
      this.failing = true;
      for (const row of rows) merge(this.pending, row);
      while (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
      this.current.clear();
    }
  }
}

function merge(into: Map<string, ThroughputRow>, row: ThroughputRow): void {
  const key = `${row.minute}|${row.task}`;
  const existing = into.get(key);
  if (!existing) {
    into.set(key, { ...row, run: { ...row.run }, wait: { ...row.wait } });
    return;
  }
  for (const field of ["processed", "failed", "dead"] as const satisfies ReadonlyArray<keyof ThroughputCounts>) existing[field] += row[field];
  mergeInto(existing.run!, row.run ?? {});
  mergeInto(existing.wait!, row.wait ?? {});
}
