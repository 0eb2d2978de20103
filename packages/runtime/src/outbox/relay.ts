import { randomUUID } from "node:crypto";
import { backoffDelayMs } from "../core/backoff.js";
import { errorToAttempt, type AttemptError } from "../core/job.js";
import type { SqlDatabase } from "../core/sql-port.js";
import type { Logger } from "../observability/logger.js";
import { SQL } from "./load-sql.js";
import { OutboxSendTimeout, RELAY_LOST } from "./outbox-errors.js";
import { claimedRow, type ClaimedRow, type ClaimRowRaw } from "./outbox-rows.js";
import { prepareBatch, type PreparedSend, type RelayDestinations } from "./send-batch.js";

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
/** How long stop() waits for sends still in flight before giving their rows back. */
const STOP_GRACE_MS = 5000;
/** The claim is prepared once per connection: its plan (the tenants' ring, claim.sql) costs more to make than to run. */
const CLAIM = { name: "jfast_outbox_claim" };
/** A pass that found due rows locked by another relay's claim waits at least this long (no spinning). */
const MIN_IDLE_MS = 25;

/**
 * Moves jfast_outbox rows to their destination. One per process that calls jfast.start(): every relay claims
 * with SKIP LOCKED, so they share the work and never hold the same row at once.
 *
 * A pass: claim a small batch (one short statement that leases the rows and counts the attempt), send it
 * with no transaction open, then settle each row: delivered, retried later with exponential backoff, or
 * dead (attempts spent, or undeliverable with this configuration, which dies at once). A relay that
 * vanishes mid-send leaves its rows leased; they come due again when the lease runs out (at least a
 * minute, and twice send_timeout), longer than the backends take to fail a send on their own.
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
  /** Rows whose send outlived send_timeout, by id: they stay claimed until that send settles. */
  private readonly slow = new Map<string, Promise<void>>();
  /** Set once stop() gave the rows of unsettled sends back: late outcomes no longer touch the database. */
  private detached = false;
  /** The tenant whose rows this relay's last claim served last: its next claim starts after it (claim.sql). */
  private lastTenant = "";

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
    if (this.slow.size > 0) {
      // Sends still in flight get a moment to settle; the rows of the others are given back (their send
      // may still land: a later send of the same id is then a no-op where the destination can tell).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(new Set(this.slow.values())),
        new Promise((resolve) => (timer = setTimeout(resolve, Math.min(STOP_GRACE_MS, this.options.sendTimeoutMs)))),
      ]);
      clearTimeout(timer);
      this.detached = true;
      const left = [...this.slow.keys()];
      this.slow.clear();
      if (left.length > 0) await this.options.db.query(SQL.release, [left, this.relayId]).catch(() => undefined);
    }
    this.detached = true;
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

  /** How long to wait before the next pass: until the next row is due or pruning is due, at most the poll interval. */
  private async idleMs(claimed: number): Promise<number> {
    const poll = Math.max(0, Math.min(this.options.pollIntervalMs, this.lastPruneAt + this.pruneEveryMs - Date.now()));
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

  /** One claim, then a send per destination; each settles its rows. Returns how many rows were claimed. */
  private async pass(): Promise<number> {
    const raw = await this.options.db.query<ClaimRowRaw & { tenant: string; place: number | string }>(SQL.claim, [this.batchSize, this.leaseMs, this.relayId, this.lastTenant], CLAIM);
    if (raw.length === 0) {
      // Nothing due after the tenant served last: the next claim reads the ring from its start.
      this.lastTenant = "";
      return 0;
    }
    // The next claim goes on around the tenants' ring after the last one served now (claim.sql).
    let last = raw[0]!;
    for (const row of raw) if (Number(row.place) > Number(last.place)) last = row;
    this.lastTenant = last.tenant;
    const rows = raw.map(claimedRow);
    const live: ClaimedRow[] = [];
    for (const row of rows) {
      // Our own send of it is still in flight past its lease: the claim just renewed the lease; let it settle.
      if (this.slow.has(row.id)) continue;
      if (row.previousClaim !== null && row.attempts > row.maxAttempts) {
        // Its last attempt was claimed by a relay that never settled it (the send may have happened).
        await this.kill(row, {
          attempt: row.attempts - 1,
          at: new Date().toISOString(),
          class: "RelayLost",
          message: `relay ${row.previousClaim} claimed this row and stopped before settling it; attempts are spent`,
          reason: RELAY_LOST,
        });
        continue;
      }
      live.push(row);
    }
    const { sends, undeliverable } = prepareBatch(live, this.options.destinations);
    for (const [row, error] of undeliverable) await this.kill(row, attemptError(error, row.attempts, "undeliverable"));
    await Promise.all(sends.map((send) => this.dispatch(send)));
    return rows.length;
  }

  /**
   * Sends one group and settles its rows. A send still unsettled after send_timeout is recorded as failing
   * (logged, /ready degraded) but keeps its rows claimed until it settles, so this relay never has two
   * sends of one row in flight; the pass moves on meanwhile.
   */
  private async dispatch(send: PreparedSend): Promise<void> {
    const ids = send.rows.map((r) => r.id);
    if (this.stopping.signal.aborted) {
      await this.options.db.query(SQL.release, [ids, this.relayId]);
      return;
    }
    const sending = Promise.resolve().then(() => send.send());
    const first = await this.race(sending);
    if (first.kind === "done") return this.delivered(ids);
    if (first.kind === "failed") return this.failed(send, first.error);
    if (first.kind === "timeout") {
      const error = new OutboxSendTimeout(this.options.sendTimeoutMs, describe(send));
      this.options.logger.warn(`outbox delivery to ${describe(send)} has not settled after ${this.options.sendTimeoutMs / 1000} s; its rows stay held until it does`, {
        rows: ids,
        error,
      });
      await this.options.db.query(SQL.noteError, [ids, this.relayId, JSON.stringify(attemptError(error, send.rows[0]!.attempts))]);
    }
    const settled: Promise<void> = sending
      .then(
        () => this.late(() => this.delivered(ids)),
        (error: unknown) => this.late(() => this.failed(send, error)),
      )
      .catch((error: unknown) => this.options.logger.warn("could not record the outcome of a slow outbox send; its rows come due again when their lease ends", { rows: ids, error }))
      .finally(() => {
        for (const id of ids) if (this.slow.get(id) === settled) this.slow.delete(id);
        this.wake();
      });
    for (const id of ids) this.slow.set(id, settled);
  }

  private race(sending: Promise<unknown>): Promise<{ kind: "done" } | { kind: "failed"; error: unknown } | { kind: "timeout" } | { kind: "stopped" }> {
    const { signal } = this.stopping;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ kind: "timeout" }), this.options.sendTimeoutMs);
      const onStop = () => resolve({ kind: "stopped" });
      signal.addEventListener("abort", onStop, { once: true });
      sending
        .then(
          () => resolve({ kind: "done" }),
          (error: unknown) => resolve({ kind: "failed", error }),
        )
        .finally(() => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onStop);
        });
    });
  }

  /** Settles a late send unless the relay has stopped (its rows were given back, the database may be closed). */
  private async late(settle: () => Promise<void>): Promise<void> {
    if (!this.detached) await settle();
  }

  private async delivered(ids: string[]): Promise<void> {
    await this.options.db.query(SQL.delivered, [ids, this.relayId]);
  }

  /** A failed send: each row is retried after its backoff, or dies if that was its last attempt. */
  private async failed(send: PreparedSend, cause: unknown): Promise<void> {
    // Every failed send is logged with its cause, once per send (a send carries a group of rows).
    this.options.logger.warn(`outbox delivery to ${describe(send)} failed; its rows are retried with backoff`, {
      rows: send.rows.map((r) => r.id),
      attempts: send.rows.map((r) => r.attempts),
      error: cause,
      ...causeOf(cause),
    });
    for (const row of send.rows) {
      const error = attemptError(cause, row.attempts);
      if (row.attempts >= row.maxAttempts) {
        await this.kill(row, error);
        continue;
      }
      const delayMs = backoffDelayMs(row.attempts, { baseMs: this.options.backoffBaseMs });
      await this.options.db.query(SQL.retry, [row.id, this.relayId, JSON.stringify(error), new Date(Date.now() + delayMs).toISOString()]);
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

  /** Deletes delivered rows past the retention, at most every retention/4 (1 s to 1 min). */
  private async prune(): Promise<void> {
    if (Date.now() - this.lastPruneAt < this.pruneEveryMs) return;
    this.lastPruneAt = Date.now();
    const [row] = await this.options.db.query<{ deleted: number }>(SQL.pruneDelivered, [this.options.retentionMs, PRUNE_BATCH]);
    // A large backlog of delivered rows is worked off one batch per pruning round.
    if (Number(row?.deleted ?? 0) >= PRUNE_BATCH) this.lastPruneAt = 0;
  }
}

function describe(send: PreparedSend): string {
  return `${send.kind === "event" ? "Kafka topic" : "queue"} "${send.destination}"`;
}

/** An error as recorded on the row: class and message (no stack: the cause is outside this process's code). */
function attemptError(error: unknown, attempt: number, reason?: string): AttemptError {
  const recorded = errorToAttempt(error, attempt, reason);
  delete recorded.stack;
  return recorded;
}

/** The driver error under a JfastError, which is what an operator reading the log needs. */
function causeOf(error: unknown): { cause?: string } {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause === undefined || cause === null) return {};
  return { cause: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause) };
}
