import type { Logger } from "../../core/logger.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { textArray } from "./job-rows.js";
import { SQL } from "./load-sql.js";

/**
 * When a batch written in a caller's transaction is looked up, in ms after the write returned: soon, since
 * callers mostly commit right after enqueueing, then twice as far apart each time, up to about the workers'
 * default poll interval (5 s), which finds what is committed later.
 */
const CHECKS_AT_MS = [1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095];

interface Watched {
  /** The first id of the batch: the transaction commits all of its rows or none. */
  id: string;
  since: number;
  check: number;
}

/**
 * The wake-up of jobs written in a caller's transaction (`enqueueWithin`, the outbox on this backend). Their
 * NOTIFY can no longer ride in that transaction (see NotifyCoalescer), and its commit happens after the write
 * returns, out of this process's sight. So the batch is looked up by primary key on a connection of our own at
 * CHECKS_AT_MS, and the look-up that sees it, i.e. committed, sends the wake-up in the same statement. A NOTIFY sent
 * before the commit would wake the workers to find nothing, and they would then sleep through the job. A batch
 * rolled back, or committed after the last look-up, is found by the workers' poll: no committed job waits longer
 * than `poll_interval` after its commit. Look-ups of all due batches go as one statement, at most one per `gapMs`.
 */
export class CommitWatch {
  private readonly db: SqlExecutor;
  private readonly channel: string;
  private readonly gapMs: number;
  private readonly logger: Pick<Logger, "warn"> | undefined;
  private watched: Watched[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private inFlight: Promise<void> | null = null;
  private lastRunAt = -Infinity;
  private failing = false;
  private closed = false;

  constructor(params: { db: SqlExecutor; channel: string; gapMs: number; logger?: Pick<Logger, "warn"> | undefined }) {
    this.db = params.db;
    this.channel = params.channel;
    this.gapMs = params.gapMs;
    this.logger = params.logger;
  }

  /** `ids`: the jobs a write in a caller's transaction inserted (none: nothing to wake for). */
  watch(ids: readonly string[]): void {
    if (this.closed || ids.length === 0) return;
    this.watched.push({ id: ids[0]!, since: performance.now(), check: 0 });
    this.schedule();
  }

  /** One last look-up of every batch still watched (most have committed by now), then stops. */
  async close(): Promise<void> {
    this.closed = true;
    this.disarm();
    await this.inFlight;
    if (this.watched.length > 0) await this.lookUp(this.watched.splice(0));
  }

  private schedule(): void {
    if (this.inFlight || this.closed || this.watched.length === 0) return;
    let due = Infinity;
    for (const w of this.watched) due = Math.min(due, w.since + CHECKS_AT_MS[w.check]!);
    const at = Math.max(due, this.lastRunAt + this.gapMs);
    if (this.timer && this.timerAt <= at) return;
    this.disarm();
    this.timerAt = at;
    // Never what keeps a process alive: a batch it did not see committed is found by the workers' poll.
    this.timer = setTimeout(() => this.run(), Math.max(0, at - performance.now())).unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  private run(): void {
    this.disarm();
    const now = performance.now();
    const due: Watched[] = [];
    const later: Watched[] = [];
    for (const w of this.watched) (w.since + CHECKS_AT_MS[w.check]! <= now + 0.5 ? due : later).push(w);
    this.watched = later;
    if (due.length === 0) return this.schedule();
    this.lastRunAt = now;
    this.inFlight = this.lookUp(due).finally(() => {
      this.inFlight = null;
      this.schedule();
    });
  }

  /** Wakes the workers if any batch is committed; the others are looked up again at their next time, or given up. */
  private async lookUp(batches: Watched[]): Promise<void> {
    let found: Set<string>;
    try {
      const rows = await this.db.query<{ id: string }>(SQL.committedIds, [textArray(batches.map((w) => w.id)), this.channel]);
      found = new Set(rows.map((r) => r.id));
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger?.warn("could not look up jobs written in a transaction to wake workers; they find them at their poll interval", { error });
      this.failing = true;
      found = new Set();
    }
    if (this.closed) return;
    for (const w of batches) {
      if (found.has(w.id) || w.check + 1 >= CHECKS_AT_MS.length) continue;
      this.watched.push({ ...w, check: w.check + 1 });
    }
  }
}
