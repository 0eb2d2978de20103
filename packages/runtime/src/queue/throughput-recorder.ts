import { MINUTE_MS, THROUGHPUT_RETENTION_MS, type ThroughputCounts, type ThroughputRow, type ThroughputStore } from "../core/throughput.js";
import type { Job } from "../core/job.js";
import type { Logger } from "../observability/logger.js";
import type { AttemptOutcome } from "../core/job-events.js";

/** How often a process adds its counts to the store. */
export const THROUGHPUT_FLUSH_MS = 5000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** Minutes and tasks kept in memory while the store cannot be written, beyond which the oldest are dropped. */
const MAX_PENDING = 10_000;

/**
 * Counts each attempt's outcome per minute and task in memory (from the job events) and adds the counts to
 * the store every THROUGHPUT_FLUSH_MS and on close, so the store sees a few upserts per flush whatever the job
 * rate. Counts that cannot be written are kept for the next flush (bounded). Also prunes the store hourly.
 */
export class ThroughputRecorder {
  readonly store: ThroughputStore;
  private readonly logger: Logger;
  private pending = new Map<string, ThroughputRow>();
  /** The row the last attempt counted into, while it is still pending. */
  private lastRow: ThroughputRow | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private failing = false;

  constructor(params: { store: ThroughputStore; logger: Logger }) {
    this.store = params.store;
    this.logger = params.logger;
  }

  finished(job: Job, outcome: AttemptOutcome): void {
    const now = Date.now();
    let row = this.lastRow;
    // Most attempts count into the same row as the one before (same task, same minute): no key to build.
    if (!row || row.task !== job.task || now < row.minute || now >= row.minute + MINUTE_MS) {
      const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
      const key = `${minute}|${job.task}`;
      let found = this.pending.get(key);
      if (!found) {
        found = { minute, task: job.task, processed: 0, failed: 0, dead: 0 };
        this.pending.set(key, found);
      }
      row = this.lastRow = found;
    }
    if (outcome === "ok") row.processed++;
    else {
      row.failed++;
      if (outcome === "dead") row.dead++;
    }
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
    this.lastRow = null;
    try {
      if (rows.length > 0) await this.store.add(rows);
      if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
        this.lastPrune = Date.now();
        await this.store.prune({ before: Date.now() - THROUGHPUT_RETENTION_MS });
      }
      if (this.failing) this.logger.info("writing throughput counts again", { store: this.store.kind });
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn("cannot write throughput counts; keeping them for the next flush", { error, store: this.store.kind });
      this.failing = true;
      for (const row of rows) merge(this.pending, row);
      while (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
      this.lastRow = null;
    }
  }
}

function merge(into: Map<string, ThroughputRow>, row: ThroughputRow): void {
  const key = `${row.minute}|${row.task}`;
  const existing = into.get(key);
  if (!existing) {
    into.set(key, { ...row });
    return;
  }
  for (const field of ["processed", "failed", "dead"] as const satisfies ReadonlyArray<keyof ThroughputCounts>) existing[field] += row[field];
}
