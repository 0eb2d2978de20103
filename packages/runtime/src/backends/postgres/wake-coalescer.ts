import type { SqlExecutor } from "../../core/sql-port.js";
import type { Logger } from "../../core/logger.js";

type BackendLogger = Pick<Logger, "warn">;

/** At most one wake-up NOTIFY per channel per this many milliseconds from one process. */
export const WAKE_WINDOW_MS = 5;

/**
 * The wake-up NOTIFY of new jobs, sent after their commit in a statement of its own rather than inside the
 * enqueuing transaction: PostgreSQL serializes the commits of notifying transactions on one database-wide lock
 * held through the commit's WAL flush, so a NOTIFY per enqueue kept concurrent enqueues from committing as a
 * group (docs/postgres.md#the-wake-up-of-an-enqueue). A wake-up asked for when none was sent in the last window
 * goes at once; the ones asked for during a window, or while a NOTIFY is in flight, are folded into one at its
 * end. A wake-up is only answered by a NOTIFY sent after it was asked for, so every commit is followed by one.
 */
export class NotifyCoalescer {
  private readonly db: SqlExecutor;
  private readonly channel: string;
  private readonly windowMs: number;
  private readonly logger: BackendLogger | undefined;
  private wanted = false;
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastSentAt = -Infinity;
  private failing = false;
  private closed = false;

  constructor(params: { db: SqlExecutor; channel: string; windowMs?: number; logger?: BackendLogger | undefined }) {
    this.db = params.db;
    this.channel = params.channel;
    this.windowMs = params.windowMs ?? WAKE_WINDOW_MS;
    this.logger = params.logger;
  }

  /** Wakes the channel's listeners: call it once what they should find is committed. */
  wake(): void {
    if (this.closed) return;
    this.wanted = true;
    this.schedule();
  }

  /**
   * Takes this window's NOTIFY for a statement of the backend's own, which sends it as it commits: true when none
   * went in the last window and none is owed. The caller then asks for no wake-up for that statement.
   */
  lead(): boolean {
    const now = performance.now();
    if (this.closed || this.inFlight || this.timer || this.wanted || now < this.lastSentAt + this.windowMs) return false;
    this.lastSentAt = now;
    return true;
  }

  /** Sends a wake-up still owed at once, and waits for the one in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
    if (this.wanted) await this.send();
  }

  private schedule(): void {
    if (this.inFlight || this.timer) return;
    const delay = this.lastSentAt + this.windowMs - performance.now();
    if (delay <= 0) {
      void this.send();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.wanted) void this.send();
    }, delay);
  }

  private send(): Promise<void> {
    this.wanted = false;
    this.lastSentAt = performance.now();
    this.inFlight = this.db
      .query("SELECT pg_notify($1, '')", [this.channel])
      .then(() => {
        if (this.failing) this.logger?.warn("sending wake-ups again", { channel: this.channel });
        this.failing = false;
      })
      .catch((error: unknown) => {
        // Workers still find the jobs through their poll interval (and the next wake-up that goes through).
        if (!this.failing) this.logger?.warn("could not send a wake-up NOTIFY; idle workers find new jobs at their poll interval", { error, channel: this.channel });
        this.failing = true;
      })
      .finally(() => {
        this.inFlight = null;
        if (this.wanted && !this.closed) this.schedule();
      });
    return this.inFlight;
  }
}
