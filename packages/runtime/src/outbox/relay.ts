import { randomUUID } from "node:crypto";
import { backoffDelayMs } from "../core/backoff.js";
import { errorToAttempt, type AttemptError } from "../core/job.js";
import type { SqlDatabase } from "../core/sql-port.js";
import type { Logger } from "../observability/logger.js";
import { SQL } from "./load-sql.js";
import { OutboxSendTimeout, RELAY_LOST, RelayStopped } from "./outbox-errors.js";
import { claimedRow, type ClaimedRow, type ClaimRowRaw } from "./outbox-rows.js";
import { sendBatch, type RelayDestinations, type SendOutcome } from "./send-batch.js";

export interface OutboxRelayOptions {
  db: SqlDatabase;
  /** NOTIFY channel the outbox writes wake relays on. */
  channel: string;
  destinations: RelayDestinations;
  logger: Logger;
  pollIntervalMs: number;
  backoffBaseMs: number;
  sendTimeoutMs: number;
  retentionMs: number;
  /** Rows per claim; small, so a slow destination holds few rows and relays in other processes share the rest. */
  batchSize?: number;
  relayId?: string;
}

export interface RelayStatus {
  running: boolean;
  relayId: string;
  /** When the relay last finished a pass (claimed or not). */
  lastPassAt: string | null;
  /** The last database error of the relay's own statements, while it lasts. */
  databaseError: string | null;
}

const DEFAULT_BATCH = 50;
const PRUNE_BATCH = 5000;
/** A pass that found due rows locked by another relay's claim waits at least this long (no spinning). */
const MIN_IDLE_MS = 25;

/**
 * Moves jfast_outbox rows to their destination. One per process that calls jfast.start(): every relay claims
 * with SKIP LOCKED, so they share the work and never hold the same row at once.
 *
 * A pass: claim a small batch (one short statement that leases the rows and counts the attempt), send it
 * with no transaction open, then settle each row: delivered, retried later with exponential backoff, or
 * dead (attempts spent, or undeliverable with this configuration, which dies at once). A relay that
 * vanishes mid-send leaves its rows leased; they come due again when the lease runs out, well after any
 * send could still be in flight (lease ≥ 2 × send_timeout).
 *
 * Wake-ups: LISTEN on the outbox channel (a write's NOTIFY arrives when its transaction commits), a timer
 * for the next row coming due, and the poll interval as the safety net for a NOTIFY that was missed.
 */
export class OutboxRelay {
  readonly relayId: string;
  private readonly options: OutboxRelayOptions;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly pruneEveryMs: number;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private woken = false;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private lastPassAt: number | null = null;
  private lastPruneAt = 0;
  private databaseError: string | null = null;

  constructor(options: OutboxRelayOptions) {
    this.options = options;
    this.relayId = options.relayId ?? `relay-${randomUUID().slice(0, 8)}`;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH;
    this.leaseMs = Math.max(60_000, 2 * options.sendTimeoutMs + 5000);
    this.pruneEveryMs = Math.min(60_000, Math.max(1000, options.retentionMs / 4));
  }

  async start(): Promise<void> {
    if (this.loop) return;
    try {
      this.unlisten = await this.options.db.listen(this.options.channel, () => this.wake());
    } catch (error) {
      // The poll interval still moves every row; only the wake-up after a commit is slower.
      this.options.logger.warn("the outbox relay cannot LISTEN for new rows; it polls every poll_interval instead", {
        channel: this.options.channel,
        error,
      });
    }
    this.loop = this.run();
  }

  /** Stops claiming, gives back rows whose send is still in flight, and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake();
    await this.loop;
    this.loop = null;
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => undefined);
  }

  wake(): void {
    this.woken = true;
    const sleeper = this.sleeper;
    if (sleeper) {
      clearTimeout(sleeper.timer);
      this.sleeper = null;
      sleeper.resolve();
    }
  }

  status(): RelayStatus {
    return {
      running: this.loop !== null && !this.stopping.signal.aborted,
      relayId: this.relayId,
      lastPassAt: this.lastPassAt === null ? null : new Date(this.lastPassAt).toISOString(),
      databaseError: this.databaseError,
    };
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    while (!this.stopping.signal.aborted) {
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.pass();
        await this.prune();
        if (this.databaseError) logger.info("the outbox relay reaches the database again");
        this.databaseError = null;
      } catch (error) {
        if (!this.databaseError) logger.warn("the outbox relay cannot use the database; it tries again every poll_interval", { error });
        this.databaseError = (error as Error).message ?? String(error);
      }
      this.lastPassAt = Date.now();
      if (this.stopping.signal.aborted) break;
      if (claimed >= this.batchSize && !this.databaseError) continue;
      await this.sleep(await this.idleMs(claimed));
    }
  }

  /** How long to wait before the next pass: until the next row is due, at most the poll interval. */
  private async idleMs(claimed: number): Promise<number> {
    const poll = this.options.pollIntervalMs;
    if (this.databaseError) return poll;
    try {
      const [row] = await this.options.db.query<{ due_in_ms: number | string | null }>(SQL.nextDue);
      if (row?.due_in_ms === null || row?.due_in_ms === undefined) return poll;
      const due = Math.max(0, Math.ceil(Number(row.due_in_ms)));
      // Due now but nothing was claimed: another relay holds those rows this very moment.
      return Math.min(poll, claimed === 0 ? Math.max(MIN_IDLE_MS, due) : due);
    } catch {
      return poll;
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || ms <= 0 || this.stopping.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeper = null;
        resolve();
      }, ms);
      this.sleeper = { timer, resolve };
    });
  }

  /** One claim, send and settle. Returns how many rows were claimed. */
  private async pass(): Promise<number> {
    const { db } = this.options;
    const raw = await db.query<ClaimRowRaw>(SQL.claim, [this.batchSize, this.leaseMs, this.relayId]);
    if (raw.length === 0) return 0;
    const rows = raw.map(claimedRow);
    const live: ClaimedRow[] = [];
    for (const row of rows) {
      if (row.previousClaim !== null && row.attempts > row.maxAttempts) {
        // Its last attempt was claimed by a relay that never settled it (the send may have happened).
        const error: AttemptError = {
          attempt: row.attempts - 1,
          at: new Date().toISOString(),
          class: "RelayLost",
          message: `relay ${row.previousClaim} claimed this row and stopped before settling it; attempts are spent`,
          reason: RELAY_LOST,
        };
        await this.kill(row, error);
        continue;
      }
      live.push(row);
    }
    const { outcomes, sends } = await sendBatch({
      rows: live,
      destinations: this.options.destinations,
      guard: (destination, send) => this.guard(destination, send),
      isAbandon: (error) => error instanceof RelayStopped,
    });
    for (const send of sends) {
      if (send.error === null) continue;
      // Every failed send is logged with its cause, once per send (one send carries a group of rows).
      this.options.logger.warn(`outbox delivery to ${send.kind === "job" ? "queue" : "topic"} "${send.destination}" failed; it is retried`, {
        rows: send.rows,
        error: send.error,
        ...causeOf(send.error),
      });
    }
    await this.settle(live, outcomes);
    return rows.length;
  }

  private async settle(rows: readonly ClaimedRow[], outcomes: Map<string, SendOutcome>): Promise<void> {
    const { db } = this.options;
    const delivered = rows.filter((r) => outcomes.get(r.id)?.kind === "delivered").map((r) => r.id);
    const abandoned = rows.filter((r) => outcomes.get(r.id)?.kind === "abandoned").map((r) => r.id);
    if (delivered.length > 0) await db.query(SQL.delivered, [delivered, this.relayId]);
    if (abandoned.length > 0) await db.query(SQL.release, [abandoned, this.relayId]);
    for (const row of rows) {
      const outcome = outcomes.get(row.id);
      if (outcome?.kind !== "failed") continue;
      const error = errorToAttempt(outcome.error, row.attempts, outcome.permanent ? "undeliverable" : undefined);
      delete error.stack;
      if (outcome.permanent || row.attempts >= row.maxAttempts) {
        await this.kill(row, error);
      } else {
        const delayMs = backoffDelayMs(row.attempts, { baseMs: this.options.backoffBaseMs });
        await db.query(SQL.retry, [row.id, this.relayId, JSON.stringify(error), new Date(Date.now() + delayMs).toISOString()]);
      }
    }
  }

  private async kill(row: ClaimedRow, error: AttemptError): Promise<void> {
    await this.options.db.query(SQL.kill, [row.id, this.relayId, JSON.stringify(error)]);
    this.options.logger.error(`outbox row ${row.id} is dead: ${error.message}`, {
      outbox_id: row.id,
      attempts: row.attempts,
      max_attempts: row.maxAttempts,
      reason: error.reason ?? "attempts spent",
      hint: "list dead rows with `jfast outbox dead`, requeue them with `jfast outbox retry <id>`",
    });
  }

  /** Bounds a send by send_timeout and by the relay stopping. The send itself cannot be cancelled. */
  private guard<T>(destination: string, send: () => Promise<T>): Promise<T> {
    const { signal } = this.stopping;
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(new RelayStopped());
      const timeoutMs = this.options.sendTimeoutMs;
      const timer = setTimeout(() => reject(new OutboxSendTimeout(timeoutMs, destination)), timeoutMs);
      const onStop = () => reject(new RelayStopped());
      signal.addEventListener("abort", onStop, { once: true });
      Promise.resolve()
        .then(send)
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onStop);
        });
    });
  }

  /** Deletes delivered rows past the retention, at most every retention/4 (1 s to 1 min). */
  private async prune(): Promise<void> {
    if (Date.now() - this.lastPruneAt < this.pruneEveryMs) return;
    this.lastPruneAt = Date.now();
    const [row] = await this.options.db.query<{ deleted: number }>(SQL.pruneDelivered, [this.options.retentionMs, PRUNE_BATCH]);
    // A large backlog of delivered rows is worked off one batch per pruning round.
    if (Number(row?.deleted ?? 0) >= PRUNE_BATCH) this.lastPruneAt = 0;
  }
}

/** The driver error under a JfastError, which is what an operator reading the log needs. */
function causeOf(error: unknown): { cause?: string } {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause === undefined || cause === null) return {};
  return { cause: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause) };
}
