import { claimedCopy, errorToAttempt, firstHandOff, Job, type AttemptError } from "../../core/job.js";
import { reserveSlots } from "../../core/backend/slot-offers.js";
import { JobState } from "../../core/job-state.js";
import {
  BackendKind,
  notSupported,
  type BackendCapabilities,
  workerLostError,
  type CancelResult,
  type ClaimParams,
  type DeadJob,
  type DeadSearch,
  type Depths,
  type EnqueueResult,
  ListState,
  type JobActionResult,
  type JobInfo,
  type JobListing,
  type LeaseReport,
  type ListJobsParams,
  type QueueBackend,
  type RetryDeadParams,
  type SlotOffer,
  type SnoozeParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import { CompletionBatcher } from "../../core/completion-batcher.js";
import type { SqlDatabase, SqlExecutor } from "../../core/sql-port.js";
import { siblingModule, type LeaseExtenderSpec } from "../../core/lease-extender.js";
import type { PauseStore } from "../../core/pause.js";
import type { ThroughputStore } from "../../core/throughput.js";
import { postgresCapabilities } from "./capabilities.js";
import { BackendError, JfastError } from "../../errors/jfast-error.js";
import { notificationChannel } from "./channel.js";
import { jobsToColumns, jsonbText, numberArray, rowToJob, rowToJson, toIso, textArray, toIsoOrNull, type JobRow } from "./job-rows.js";
import { SQL, type ListingSql } from "./load-sql.js";
import { decodeCursor, encodeCursor, LIST_WINDOW, listById } from "../../core/job-listing.js";
import { enqueueUnique } from "./unique-enqueue.js";
import { hasUnique } from "../../core/unique.js";
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import { rewriteStoredJobs } from "./rewrite-stored.js";
import { createWakeUps, type WakeUps } from "./wake-ups.js";

const DOCS = "jfast docs postgres";

/**
 * The statements every worker runs over and over are prepared once per connection: parsing and planning the
 * claim cost as much as running it for a single job. A generic plan PostgreSQL may settle on after a few runs
 * has the custom plans' shape, since every branch reads through an index matching its predicate and key
 * (test/postgres/claim-plan.test.ts checks the prepared claim too).
 */
const PREPARED = {
  enqueue: { name: "jfast_enqueue" },
  enqueueFresh: { name: "jfast_enqueue_fresh" },
  enqueueNotifying: { name: "jfast_enqueue_notifying" },
  enqueueFreshNotifying: { name: "jfast_enqueue_fresh_notifying" },
  enqueueHandOff: { name: "jfast_enqueue_hand_off" },
  claim: { name: "jfast_claim" },
  claimDurable: { name: "jfast_claim_durable" },
  claimLimitsLock: { name: "jfast_claim_limits_lock" },
  claimLimited: { name: "jfast_claim_limited" },
  complete: { name: "jfast_complete" },
  completeDelete: { name: "jfast_complete_delete" },
  extendLeases: { name: "jfast_extend_leases" },
  nextDue: { name: "jfast_next_due" },
} as const;

/**
 * A batch of new jobs larger than this is written as several statements of this many rows in one transaction,
 * each built while the server runs the one before it (see insertPipelined).
 */
const PIPELINE_ROWS = 1000;

/** A due job that the last claim did not get is locked by another claimer: look again soon, not at once. */
const RECHECK_MS = 100;
/**
 * With limited tasks, an idle worker looks again at least this often: a slot freed by another process, or a rate
 * window moving on, sends no notification (docs/tasks.md#limits).
 */
const LIMIT_RECHECK_MS = 250;
/**
 * Rows read at most per state to split the depths by task (depths-by-task.sql): live jobs sampled per state and
 * scaled to the exact totals, and one tenant's dead letters (no counter is kept per tenant). Exact below it.
 */
const TASK_SPLIT_READ = 10_000;
/**
 * Due rows read first to find the running jobs (depths.sql, depths-by-task.sql): they sit at the head of the
 * backlog, so a thousand covers every worker of most deployments. When the last row read is running too, the
 * count is read again ten times deeper, up to RUNNING_READ_MAX. Kept small so that the planner's estimate of
 * the statement stays under jit_above_cost (a JIT compilation costs more than the whole count).
 */
const RUNNING_READ = 1_000;
const RUNNING_READ_MAX = 100_000;

/** What the backend logs through; structurally the runtime's Logger (backends import core and errors only). */
export interface BackendLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface PostgresBackendOptions {
  /** The port over pg or PGlite, its connections already on the schema's search_path and migrated. */
  db: SqlDatabase;
  schema: string;
  /** `[plugin.queue] name`: several queues may share one jfast_jobs table. */
  queue: string;
  /**
   * `[plugin.queue] keep_completed`: a completed job's row stays as `completed` (default), or is deleted on
   * completion, which writes much less (no new row version, no index entry) but forgets the job.
   */
  keepCompleted?: boolean;
  /**
   * `[plugin.queue] durable_claims`: a claim commits under the server's synchronous_commit (on by default)
   * instead of with it off for its own transaction (docs/postgres.md#durability-of-claims). Default false.
   */
  durableClaims?: boolean;
  /**
   * The server's URL, for the heartbeat thread's own connection (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease). Absent for PGlite, whose
   * leases no other process can take.
   */
  connectionUrl?: string;
  /**
   * Where the views read (depths, job lists, dead letters): a replica of `[plugin.database] read_url`. Never
   * the claim or anything that must see its own writes. Default: `db`.
   */
  reader?: SqlExecutor;
  logger?: BackendLogger;
}

/**
 * The PostgreSQL queue: jobs are rows of jfast_jobs, claimed with FOR UPDATE SKIP LOCKED through partial
 * indexes that hold only live rows, woken by LISTEN/NOTIFY. It can also write jobs inside a caller's
 * transaction (`enqueueWithin`), which is what makes `outbox.enqueue` exact on this backend.
 */
export class PostgresBackend implements QueueBackend {
  readonly kind = BackendKind.postgres;
  readonly capabilities: BackendCapabilities;
  readonly channel: string;
  private readonly db: SqlDatabase;
  /** The views' reads (see PostgresBackendOptions.reader). */
  private readonly reader: SqlExecutor;
  private readonly queue: string;
  private readonly schema: string;
  private readonly logger: BackendLogger | undefined;
  private readonly completions: CompletionBatcher;
  private readonly wakeUps: WakeUps;
  private readonly waiters = new Set<() => void>();
  /** Idle workers of this process offering their free slots to jobs enqueued here (offerSlots). */
  private readonly offers = new Set<SlotOffer>();
  /** Bumped by every notification: a wait that saw it change while arming itself returns at once. */
  private notifications = 0;
  private listening: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private listenFailed = false;
  private closed = false;
  /** The queue's limited tasks (setLimits): empty, the claim is claim.sql alone, as without limits. */
  private limitedTasks: string[] = [];
  private limitedSet: ReadonlySet<string> = new Set();
  /** claim.sql as durable_claims asks: with synchronous_commit off for its transaction (default), or not. */
  private readonly connectionUrl: string | undefined;
  private readonly claimSql: { all: string; one: string; prepared: { name: string } };

  constructor(options: PostgresBackendOptions) {
    this.db = options.db;
    this.reader = options.reader ?? options.db;
    this.queue = options.queue;
    this.schema = options.schema;
    this.logger = options.logger;
    this.connectionUrl = options.connectionUrl;
    this.capabilities = postgresCapabilities(options);
    this.channel = notificationChannel(options.schema, options.queue);
    this.wakeUps = createWakeUps({ db: options.db, channel: this.channel, logger: options.logger });
    this.claimSql = options.durableClaims
      ? { all: SQL.claimDurable, one: SQL.claimOneDurable, prepared: PREPARED.claimDurable }
      : { all: SQL.claim, one: SQL.claimOne, prepared: PREPARED.claim };
    const [complete, name] = options.keepCompleted === false ? [SQL.completeDelete, PREPARED.completeDelete] : [SQL.complete, PREPARED.complete];
    // The ids as an array literal built here (textArray): node-postgres's own conversion escapes each element
    // through regular expressions, a visible share of a drain's time at hundreds of ids per write.
    this.completions = new CompletionBatcher(async (ids, workerId) => {
      await this.run("complete", () => this.db.query(complete, [textArray(ids), workerId], name));
    });
  }

  async setup(): Promise<void> {
    const [row] = await this.run("setup", () => this.db.query<{ jobs: unknown; counters: unknown }>(SQL.checkSchema));
    if (!row?.jobs || !row.counters) {
      throw new BackendError(`the PostgreSQL queue's tables are missing in schema "${this.schema}"`, {
        code: "SCHEMA_MISSING",
        hint: "the database plugin migrates on start: enable \"database\" in [plugins] and await jfast.start() (or run migrate()) before using the queue",
        docs: `${DOCS}#migrations`,
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    await this.completions.flush();
    await this.wakeUps.close();
    await this.listening;
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => undefined);
  }

  enqueue({ jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
    // A bulk enqueue goes through the table (pipelined): a worker's few free slots are not worth one huge statement.
    // A limited task's job is never handed over: only the claim may start it.
    if (!hasUnique(jobs) && this.offers.size > 0 && jobs.length > 0 && jobs.length < 2 * PIPELINE_ROWS && !this.anyLimited(jobs)) return this.enqueueHandingOff(jobs);
    return this.enqueueWithin({ executor: this.db, jobs });
  }

  private anyLimited(jobs: readonly Job[]): boolean {
    if (this.limitedSet.size === 0) return false;
    for (let i = 0; i < jobs.length; i++) if (this.limitedSet.has(jobs[i]!.task)) return true;
    return false;
  }

  async setLimits({ limits }: { limits: LimitMap }): Promise<void> {
    const tasks = [...limits.keys()];
    const of = [...limits.values()];
    await this.run("setLimits", () =>
      this.db.query(SQL.setLimits, [
        this.queue,
        tasks,
        of.map((l) => l.concurrency),
        of.map((l) => l.rateLimit?.max ?? null),
        of.map((l) => l.rateLimit?.perMs ?? null),
      ]),
    );
    this.limitedTasks = tasks;
    this.limitedSet = new Set(tasks);
  }

  async limitUsage({ task }: { task: string }): Promise<LimitUsage> {
    const [row] = await this.run("limitUsage", () => this.db.query<{ running: string | number; started: string | number }>(SQL.limitUsage, [this.queue, task]));
    return { running: Number(row?.running ?? 0), startedInWindow: Number(row?.started ?? 0) };
  }

  offerSlots(offer: SlotOffer): () => void {
    this.offers.add(offer);
    return () => this.offers.delete(offer);
  }

  /**
   * An idle worker of this process waits: the due jobs of a batch of new ones (up to its free slots) are stored
   * already claimed by it and handed over in memory after the commit, the rest stored ready as usual
   * (enqueue-hand-off.sql). Only new jobs (`firstHandOff`: an id passed in may exist already, and only an
   * insert that cannot conflict can claim in the same statement), and never inside a caller's transaction
   * (the commit is the caller's, after this returns).
   */
  private async enqueueHandingOff(jobs: Job[]): Promise<EnqueueResult> {
    if (!firstHandOff(jobs)) return this.insert(this.db, jobs, false);
    const { handedTo, reserved } = reserveSlots(this.offers, jobs, Date.now());
    if (reserved.size === 0) return this.insert(this.db, jobs, true);
    const lockedBy = handedTo.map((offer) => offer?.workerId ?? null);
    const leaseMs = handedTo.map((offer) => offer?.leaseMs ?? null);
    const params = [this.queue, ...jobsToColumns(jobs), textArray(lockedBy), numberArray(leaseMs)];
    let row: { inserted: string | number; ready: string | number } | undefined;
    try {
      [row] = await this.run("enqueue", () => this.db.query<{ inserted: string | number; ready: string | number }>(SQL.enqueueHandOff, params, PREPARED.enqueueHandOff));
    } catch (error) {
      for (const [offer, count] of reserved) offer.cancel(count);
      throw error;
    }
    for (const [offer, count] of reserved) {
      const claimed: Job[] = [];
      for (let i = 0; i < jobs.length; i++) if (handedTo[i] === offer) claimed.push(claimedCopy(jobs[i]!));
      offer.deliver(claimed, count);
    }
    if (Number(row?.ready) > 0) this.wakeUps.committed();
    assertAllInserted(row?.inserted, jobs.length);
    return { inserted: jobs.map((job) => job.id) };
  }

  /**
   * Inserts the jobs through the caller's executor, i.e. inside their open transaction: the jobs exist iff that
   * transaction commits, and workers are woken once a look-up sees them committed (wake-ups.ts).
   */
  enqueueWithin({ executor, jobs }: { executor: SqlExecutor; jobs: Job[] }): Promise<EnqueueResult> {
    const write = hasUnique(jobs) ? this.enqueueUniqueJobs(executor, jobs) : this.insert(executor, jobs, firstHandOff(jobs));
    if (executor !== this.db) return this.wakeUps.afterCallerWrite(write);
    // insert() wakes workers for its own statements itself.
    return hasUnique(jobs) ? this.wakeUps.afterCommit(write) : write;
  }

  /**
   * A batch with a unique job: its own statements. A period-held key and its job's row are written in one
   * transaction (the caller's, or one opened here); a state-held key is its row, one statement, no transaction.
   */
  private enqueueUniqueJobs(executor: SqlExecutor, jobs: Job[]): Promise<EnqueueResult> {
    firstHandOff(jobs);
    const write = (tx: SqlExecutor) => enqueueUnique({ executor: tx, queue: this.queue, jobs });
    const own = executor === this.db && jobs.some((job) => job.unique?.periodMs != null);
    return this.run("enqueue", () => (own ? this.db.transaction(write) : write(executor)));
  }

  /**
   * `fresh`: every id was generated here and never stored (`firstHandOff`), so no conflict check is needed. On the
   * backend's own connection, workers are woken by the statement or after it (wake-ups.ts).
   */
  private insert(executor: SqlExecutor, jobs: Job[], fresh: boolean): Promise<EnqueueResult> {
    if (jobs.length === 0) return Promise.resolve({ inserted: [] });
    if (executor !== this.db) return this.insertWith({ executor, jobs, fresh, notify: null });
    if (fresh && jobs.length >= 2 * PIPELINE_ROWS) return this.wakeUps.afterCommit(this.insertPipelined(jobs));
    return this.wakeUps.ownStatement((notify) => this.insertWith({ executor, jobs, fresh, notify }));
  }

  /** `notify`: the channel the statement itself notifies as it commits (the notifying forms, load-sql.ts), or null. */
  private async insertWith({ executor, jobs, fresh, notify }: { executor: SqlExecutor; jobs: Job[]; fresh: boolean; notify: string | null }): Promise<EnqueueResult> {
    const params = notify === null ? [this.queue, ...jobsToColumns(jobs)] : [this.queue, ...jobsToColumns(jobs), notify];
    if (fresh) {
      // Ids generated here, never stored: all of them are inserted, or the statement fails.
      const [sql, name] = notify === null ? [SQL.enqueueFresh, PREPARED.enqueueFresh] : [SQL.enqueueFreshNotifying, PREPARED.enqueueFreshNotifying];
      const [row] = await this.run("enqueue", () => executor.query<{ inserted: string | number }>(sql, params, name));
      assertAllInserted(row?.inserted, jobs.length);
      return { inserted: jobs.map((job) => job.id) };
    }
    const [sql, name] = notify === null ? [SQL.enqueue, PREPARED.enqueue] : [SQL.enqueueNotifying, PREPARED.enqueueNotifying];
    const rows = await this.run("enqueue", () => executor.query<{ id: string }>(sql, params, name));
    const inserted = new Set(rows.map((r) => r.id));
    // Keep the caller's order (RETURNING does not promise one).
    return { inserted: [...new Set(jobs.map((j) => j.id))].filter((id) => inserted.has(id)) };
  }

  /**
   * A large batch of new jobs in one transaction of several statements: while the server inserts one slice,
   * this process builds the next one's parameters, so the two halves of the work overlap instead of taking
   * turns (a bulk enqueue was about half Node building arrays, half PostgreSQL inserting). All or nothing,
   * as one statement would be; one commit, one wake-up after it.
   */
  private insertPipelined(jobs: Job[]): Promise<EnqueueResult> {
    return this.run("enqueue", () =>
      this.db.transaction(async (tx) => {
        const columns = (from: number) => [this.queue, ...jobsToColumns(jobs.slice(from, from + PIPELINE_ROWS))];
        const insert = (params: unknown[]) => tx.query<{ inserted: string | number }>(SQL.enqueueFresh, params, PREPARED.enqueueFresh);
        let inserted = 0;
        let inFlight = insert(columns(0));
        for (let from = PIPELINE_ROWS; from < jobs.length; from += PIPELINE_ROWS) {
          const next = columns(from);
          const [row] = await inFlight;
          inserted += Number(row?.inserted);
          inFlight = insert(next);
        }
        const [row] = await inFlight;
        inserted += Number(row?.inserted);
        assertAllInserted(inserted, jobs.length);
        return { inserted: jobs.map((job) => job.id) };
      }),
    );
  }

  async claim({ workerId, limit, leaseMs, pausedTasks = [] }: ClaimParams): Promise<Job[]> {
    if (limit <= 0) return [];
    if (this.limitedTasks.length > 0) return this.claimWithLimits({ workerId, limit, leaseMs, pausedTasks });
    return this.claimPlain([this.queue, limit, workerId, leaseMs, jsonbText(workerLostError(0)), pausedTasks]);
  }

  /**
   * A queue with limited tasks (docs/tasks.md#limits): their jobs first, within their limits, in one transaction
   * (claim-limits-lock.sql, then claim-limited.sql); then claim.sql for the room left, leaving those tasks' jobs
   * as it leaves a paused task's.
   */
  private async claimWithLimits({ workerId, limit, leaseMs, pausedTasks = [], startable = limit }: ClaimParams): Promise<Job[]> {
    const lost = jsonbText(workerLostError(0));
    const room = Math.min(limit, startable);
    const limited = room <= 0 ? [] : await this.run("claim", () =>
      this.db.transaction(async (tx) => {
        const locked = await tx.query<{ task: string }>(SQL.claimLimitsLock, [this.queue, pausedTasks], PREPARED.claimLimitsLock);
        if (locked.length === 0) return [];
        const tasks = locked.map((row) => row.task);
        return tx.query<JobRow>(SQL.claimLimited, [this.queue, room, workerId, leaseMs, lost, tasks], PREPARED.claimLimited);
      }),
    );
    const jobs = limited.map(rowToJob);
    if (jobs.length >= limit) return jobs;
    const rest = await this.claimPlain([this.queue, limit - jobs.length, workerId, leaseMs, lost, [...pausedTasks, ...this.limitedTasks]]);
    return jobs.length === 0 ? rest : [...jobs, ...rest];
  }

  private async claimPlain(params: unknown[]): Promise<Job[]> {
    let rows: JobRow[];
    try {
      rows = await this.db.query<JobRow>(this.claimSql.all, params, this.claimSql.prepared);
    } catch (error) {
      if (!isRowError(error)) throw translate(error, "claim", this.schema);
      return this.claimOneByOne(params);
    }
    // Oldest first, as claim.sql orders them.
    return rows.map(rowToJob);
  }

  /**
   * The claim failed on a row it cannot process (a data error: a payload written by hand, a trigger of the
   * service's that refuses it). Rather than fail every claim after it, the jobs are claimed one at a time and the
   * row that fails is quarantined: moved to dead letters with the reason. docs/postgres.md#quarantine
   */
  private async claimOneByOne(params: unknown[]): Promise<Job[]> {
    const [queue, limit, , , , pausedTasks] = params;
    const candidates = await this.run("claim", () => this.db.query<{ id: string }>(SQL.claimCandidates, [queue, limit, pausedTasks]));
    const jobs: Job[] = [];
    for (const { id } of candidates) {
      try {
        const [row] = await this.db.query<JobRow>(this.claimSql.one, [...params, id]);
        if (row) jobs.push(rowToJob(row));
      } catch (error) {
        // Another kind of failure (the connection) ends the round; what was claimed so far runs.
        if (!isRowError(error)) {
          if (jobs.length > 0) return jobs;
          throw translate(error, "claim", this.schema);
        }
        await this.quarantine(id, error);
      }
    }
    return jobs;
  }

  private async quarantine(id: string, error: unknown): Promise<void> {
    const message = `a claim could not process this job's row, so it was set aside: ${(error as Error).message}`;
    const reason = { ...errorToAttempt(new Error(message), 0, "quarantined"), class: "QuarantinedJob" };
    delete reason.stack;
    try {
      const moved = await this.db.query(SQL.quarantine, [id, jsonbText(reason)]);
      if (moved.length > 0) this.logger?.warn("quarantined a job its claim could not process", { jobId: id, queue: this.queue, error: (error as Error).message });
    } catch (cause) {
      this.logger?.warn("could not quarantine a job its claim cannot process; the claims go around it", {
        jobId: id,
        queue: this.queue,
        error: (error as Error).message,
        quarantineError: (cause as Error).message,
      });
    }
  }

  leaseExtender(): LeaseExtenderSpec {
    const url = this.connectionUrl;
    if (!url) throw notSupported("leaseThread", "this PostgreSQL queue has no connection URL another thread could open (PGlite, embedded)");
    return { module: siblingModule(import.meta.url, "lease-extender"), options: { url, schema: this.schema } };
  }

  async extendLeases({ workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    if (jobIds.length === 0) return { cancelled: [] };
    const rows = await this.run("extendLeases", () =>
      this.db.query<{ id: string }>(SQL.extendLeases, [jobIds, workerId, leaseMs], PREPARED.extendLeases),
    );
    return { cancelled: rows.map((r) => r.id) };
  }

  complete({ workerId, job }: { workerId: string; job: Job }): Promise<void> {
    return this.completions.add(job.id, workerId);
  }

  async retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    await this.run("retry", () =>
      this.db.query(SQL.retry, [params.job.id, params.workerId, jsonbText(params.error), params.availableAt.toISOString(), this.channel]),
    );
  }

  async kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    await this.run("kill", () => this.db.query(SQL.kill, [params.job.id, params.workerId, jsonbText(params.error)]));
  }

  async release({ workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    if (jobs.length === 0) return;
    await this.run("release", () =>
      this.db.query(SQL.release, [jobs.map((j) => j.id), workerId, this.channel, availableAt?.toISOString() ?? null]),
    );
  }

  async snooze({ workerId, job, availableAt, maxSnoozes }: SnoozeParams): Promise<{ snoozed: boolean }> {
    const rows = await this.run("snooze", () =>
      this.db.query(SQL.snooze, [job.id, workerId, availableAt.toISOString(), maxSnoozes, this.channel]),
    );
    return { snoozed: rows.length > 0 };
  }

  async cancel({ id }: { id: string }): Promise<CancelResult> {
    const rows = await this.run("cancel", () => this.db.query(SQL.cancel, [this.queue, id]));
    if (rows.length > 0) return { cancelled: true, state: JobState.cancelled };
    const info = await this.getJob({ id });
    return { cancelled: false, state: info?.state ?? null };
  }

  /**
   * LISTEN on the queue's channel (one dedicated connection per process), and a timer for the next due
   * job or expiring lease so a delayed job or a vanished worker's job is picked up on time without
   * polling. `timeoutMs` (the poll interval) is only the safety net for a lost notification.
   * NOTIFY is a hint: it is not queued for a worker that is not listening at that moment, and it may wake
   * several workers for one job. The caller claims afterwards and may find nothing.
   */
  async waitForWork({ signal, timeoutMs, pausedTasks = [] }: { signal: AbortSignal; timeoutMs: number; pausedTasks?: readonly string[] }): Promise<void> {
    if (signal.aborted || this.closed) return;
    await this.ensureListening();
    // Read the table only after LISTEN is active: a job enqueued before is seen by this query, one
    // enqueued after notifies us. Nothing falls in between.
    const seen = this.notifications;
    let dueInMs: number | null = null;
    try {
      // A limited task's due jobs may be over its limit: they do not wake this worker; LIMIT_RECHECK_MS does.
      const skipped = this.limitedTasks.length > 0 ? [...pausedTasks, ...this.limitedTasks] : pausedTasks;
      const [row] = await this.run("waitForWork", () => this.db.query<{ due_in_ms: number | string | null }>(SQL.nextDue, [this.queue, skipped], PREPARED.nextDue));
      dueInMs = row?.due_in_ms === null || row?.due_in_ms === undefined ? null : Number(row.due_in_ms);
    } catch (error) {
      this.logger?.warn("could not look up the next due job; waiting for the poll interval", { error });
    }
    if (signal.aborted || this.closed || this.notifications !== seen) return;
    let wait = dueInMs === null ? timeoutMs : Math.min(timeoutMs, dueInMs <= 0 ? RECHECK_MS : Math.ceil(dueInMs) + 1);
    if (this.limitedTasks.length > 0) wait = Math.min(wait, LIMIT_RECHECK_MS);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, wait));
      signal.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
  }

  async listDead({ limit, offset = 0 }: { limit: number; offset?: number }): Promise<DeadJob[]> {
    const rows = await this.run("listDead", () =>
      this.reader.query<JobRow & { died_at: Date | string }>(SQL.listDead, [this.queue, limit, offset]),
    );
    return rows.map((row) => {
      const job = rowToJson(row);
      return { job, diedAt: toIso(row.died_at), lastError: job.errors.at(-1) ?? null };
    });
  }

  async retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    if ("all" in params) {
      const rows = await this.run("retryDead", () => this.db.query<{ id: string }>(SQL.retryDeadAll, [this.queue, this.channel]));
      return { retried: rows.map((r) => r.id), missing: [] };
    }
    const rows = await this.run("retryDead", () => this.db.query<{ id: string }>(SQL.retryDead, [this.queue, params.ids, this.channel]));
    return splitFound(params.ids, rows, "retried");
  }

  async discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    if ("all" in params) {
      const rows = await this.run("discardDead", () => this.db.query<{ id: string }>(SQL.discardDeadAll, [this.queue]));
      return { discarded: rows.map((r) => r.id), missing: [] };
    }
    const rows = await this.run("discardDead", () => this.db.query<{ id: string }>(SQL.discardDead, [this.queue, params.ids]));
    return splitFound(params.ids, rows, "discarded");
  }

  async prune({ state, select, limit }: PruneParams): Promise<number> {
    const [sql, params] =
      state === RetainedState.dead
        ? "before" in select
          ? [SQL.pruneDead, [this.queue, select.before.toISOString(), limit]]
          : [SQL.pruneDeadCount, [this.queue, select.keepNewest, limit]]
        : "before" in select
          ? [SQL.pruneFinished, [this.queue, state, select.before.toISOString(), limit]]
          : [SQL.pruneFinishedCount, [this.queue, state, select.keepNewest, limit]];
    const [row] = await this.run("prune", () => this.db.query<{ deleted: number | string }>(sql, params));
    return Number(row?.deleted ?? 0);
  }

  async claimPruner({ owner, ttlMs }: { owner: string; ttlMs: number }): Promise<boolean> {
    const rows = await this.run("claimPruner", () => this.db.query(SQL.claimLease, [`prune:${this.queue}`, owner, ttlMs]));
    return rows.length === 1;
  }

  async releasePruner({ owner }: { owner: string }): Promise<void> {
    await this.run("releasePruner", () => this.db.query(SQL.releaseLease, [`prune:${this.queue}`, owner]));
  }

  async depths(): Promise<Depths> {
    type Row = Record<keyof Depths, string | number> & { more: boolean };
    const [row] = await readingRunning(
      (read) => this.run("depths", () => this.reader.query<Row>(SQL.depths, [this.queue, read])),
      (rows) => rows[0]?.more === true,
    );
    return {
      ready: Number(row?.ready ?? 0),
      scheduled: Number(row?.scheduled ?? 0),
      running: Number(row?.running ?? 0),
      dead: Number(row?.dead ?? 0),
    };
  }

  async depthsByTask(params: { tenantId?: string | undefined } = {}): Promise<TaskDepths> {
    type Row = { task: string | null; ready: string | number; scheduled: string | number; running: string | number; dead: string | number; estimated: boolean | null; more: boolean | null };
    const rows = await readingRunning(
      (read) => this.run("depthsByTask", () => this.reader.query<Row>(SQL.depthsByTask, [this.queue, params.tenantId ?? null, TASK_SPLIT_READ, read])),
      (result) => result.some((r) => r.task === null && r.more === true),
    );
    const tasks: Record<string, Depths> = {};
    let exact = true;
    for (const row of rows) {
      if (row.task === null) {
        exact = row.estimated !== true;
        continue;
      }
      tasks[row.task] = { ready: Number(row.ready), scheduled: Number(row.scheduled), running: Number(row.running), dead: Number(row.dead) };
    }
    return { tasks, exact };
  }

  /** Through the GIN index on dead rows' payload (migration 0012, search-dead.sql); keyset pages by (died_at, seq). */
  async searchDead(params: DeadSearch): Promise<{ rows: DeadJob[]; next: string | null }> {
    const containment = params.payload.path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), params.payload.equals);
    const [afterAt, afterSeq] = params.after ? splitCursor(params.after) : [null, null];
    const rows = await this.run("searchDead", () =>
      this.reader.query<JobRow & { died_at: Date | string; cursor_at: string }>(SQL.searchDead, [
        this.queue,
        JSON.stringify(containment),
        params.task ?? null,
        params.tenantId ?? null,
        afterAt,
        afterSeq,
        params.limit + 1,
      ]),
    );
    const page = rows.slice(0, params.limit);
    const last = page.at(-1);
    return {
      rows: page.map((row) => {
        const job = rowToJson(row);
        return { job, diedAt: toIso(row.died_at), lastError: job.errors.at(-1) ?? null };
      }),
      next: rows.length > params.limit && last ? `${last.cursor_at}|${last.seq}` : null,
    };
  }

  /** `jfast keys rotate`: waiting jobs and dead letters re-encrypted in place (core/stored-rewrite.ts). */
  rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    return rewriteStoredJobs({ db: this.db, queue: this.queue, rewrite: params.rewrite });
  }

  async getJob({ id }: { id: string }): Promise<JobInfo | null> {
    const [row] = await this.run("getJob", () => this.db.query<ListedRow>(SQL.getJob, [this.queue, id]));
    return row ? rowToInfo(row) : null;
  }

  /**
   * Through the index of each state (list-due.sql, list-scheduled.sql, list-dead-page.sql, list-finished.sql),
   * reading at most LIST_WINDOW entries per page; `next` continues after the last entry read.
   */
  async listJobs(params: ListJobsParams): Promise<JobListing> {
    if (params.id !== undefined) return listById((p) => this.getJob(p), { ...params, id: params.id });
    const statement = LISTING[params.state];
    const after = decodeCursor(params, 2) as [string, number] | null;
    // Finished jobs page by id alone (list-finished.sql): the cursor's seq is not sent.
    const afterSeq = after === null || statement === SQL.listFinished ? null : after[1];
    const sql = statement[params.order][after ? "after" : "first"];
    type Row = ListedRow & { cursor_at: string | null; cursor_seq: string | number | null; edge_at: string | null; edge_seq: string | number | null; scanned: string | number };
    const dbState = params.state === ListState.ready || params.state === ListState.scheduled ? JobState.ready : params.state;
    const rows = await this.run("listJobs", () =>
      this.reader.query<Row>(sql, [this.queue, dbState, params.task ?? null, params.tenantId ?? null, after?.[0] ?? null, afterSeq, LIST_WINDOW, params.limit]),
    );
    const page = rows.filter((row) => row.id !== null);
    const summary = rows[0];
    const last = page.at(-1);
    const cursorOf = (at: string, seq: string | number | null) => encodeCursor(params, [at, seq === null ? 0 : Number(seq)]);
    let next: string | null = null;
    if (page.length >= params.limit && last) next = cursorOf(last.cursor_at!, last.cursor_seq);
    else if (summary && Number(summary.scanned) >= LIST_WINDOW && summary.edge_at !== null) next = cursorOf(summary.edge_at, summary.edge_seq);
    return { rows: page.map(rowToInfo), next, exact: true };
  }

  async runNow({ id }: { id: string }): Promise<JobActionResult> {
    const rows = await this.run("runNow", () => this.db.query(SQL.runNow, [this.queue, id, this.channel]));
    if (rows.length > 0) return { done: true, state: JobState.ready };
    return { done: false, state: (await this.getJob({ id }))?.state ?? null };
  }

  async deleteJob({ id }: { id: string }): Promise<JobActionResult> {
    const rows = await this.run("deleteJob", () => this.db.query(SQL.deleteJob, [this.queue, id]));
    if (rows.length > 0) return { done: true, state: null };
    return { done: false, state: (await this.getJob({ id }))?.state ?? null };
  }

  /** Kept in the database by the service (jfast_paused_tasks), which this backend's claim is told about. */
  pauseStore(): PauseStore {
    throw notSupported("pauseStore", "the PostgreSQL queue keeps no store of paused tasks; the service keeps them in jfast_paused_tasks");
  }

  /** The service keeps throughput counts in its database, or in memory. */
  throughputStore(): ThroughputStore {
    throw notSupported("throughputStore", "the PostgreSQL queue keeps no throughput counts; the service keeps them in its database");
  }

  private ensureListening(): Promise<void> {
    if (this.unlisten || this.closed) return Promise.resolve();
    this.listening ??= this.db
      .listen(this.channel, () => {
        this.notifications++;
        this.wakeAll();
      })
      .then(async (unlisten) => {
        if (this.closed) return unlisten();
        this.unlisten = unlisten;
        if (this.listenFailed) this.logger?.warn("listening for new jobs again", { channel: this.channel });
        this.listenFailed = false;
      })
      .catch((error) => {
        // Not fatal: the worker still finds jobs through the due-time timer and the poll interval.
        if (!this.listenFailed) this.logger?.warn("cannot LISTEN for new jobs; polling until it can", { error, channel: this.channel });
        this.listenFailed = true;
      })
      .finally(() => {
        this.listening = null;
      });
    return this.listening;
  }

  private wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Driver errors become BackendError here, at the backend's boundary. */
  private async run<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw translate(error, operation, this.schema);
    }
  }
}

function translate(error: unknown, operation: string, schema: string): JfastError {
  if (error instanceof JfastError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = (error as Error)?.message ?? String(error);
  if (code === "42P01" || code === "42883") {
    return new BackendError(`postgres queue: ${operation} failed: ${message}`, {
      code: "SCHEMA_MISSING",
      hint: `the queue's tables or functions are missing in schema "${schema}"; start the app (it migrates) before using the queue`,
      docs: `${DOCS}#migrations`,
      cause: error,
    });
  }
  if (code === "22P05") {
    return new BackendError(`postgres queue: ${operation} failed: ${message}`, {
      code: "PAYLOAD_UNSUPPORTED",
      hint: "PostgreSQL JSON cannot store the NUL character (\\u0000): strip it from the payload, or encode binary data (base64)",
      docs: DOCS,
      cause: error,
    });
  }
  return new BackendError(`postgres queue: ${operation} failed: ${message}`, {
    code: "BACKEND_QUERY_FAILED",
    hint: "see the cause; if the database was unreachable, the job is not lost: a lease brings claimed work back",
    docs: DOCS,
    cause: error,
  });
}

/**
 * A failure of one row rather than of the database: a data exception (class 22: a value the statement cannot
 * read or write), an integrity violation (class 23) or an exception raised by a trigger (P0001).
 */
function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23") || code === "P0001");
}

/** Runs a depth statement reading RUNNING_READ due rows for the running jobs, ten times deeper while it says `more`. */
type ListedRow = JobRow & { state: JobState; locked_by: string | null; locked_until: Date | string | null; died_at: Date | string | null };

function rowToInfo(row: ListedRow): JobInfo {
  return {
    job: rowToJson(row),
    state: row.state,
    lockedBy: row.locked_by,
    lockedUntil: toIsoOrNull(row.locked_until),
    diedAt: toIsoOrNull(row.died_at),
  };
}

/** The statement listing each state; its $2 is the stored state (a scheduled job is stored ready). */
const LISTING: Record<ListState, ListingSql> = {
  ready: SQL.listDue,
  running: SQL.listDue,
  scheduled: SQL.listScheduled,
  dead: SQL.listDeadPage,
  completed: SQL.listFinished,
  cancelled: SQL.listFinished,
};

async function readingRunning<T>(query: (read: number) => Promise<T>, more: (result: T) => boolean): Promise<T> {
  for (let read = RUNNING_READ; ; read *= 10) {
    const result = await query(read);
    if (!more(result) || read >= RUNNING_READ_MAX) return result;
  }
}

/** An insert of new ids (no ON CONFLICT) stores every row or fails: any other count is a bug to stop on. */
function assertAllInserted(inserted: unknown, expected: number): void {
  if (Number(inserted) !== expected) throw new Error(`inserted ${String(inserted)} of ${expected} new jobs`);
}

function splitCursor(cursor: string): [string, string] {
  const bar = cursor.lastIndexOf("|");
  const at = cursor.slice(0, bar);
  const seq = cursor.slice(bar + 1);
  // The timestamptz as PostgreSQL prints it: 2026-11-29 22:38:49.77506+00
  if (bar <= 0 || !/^\d+$/.test(seq) || !/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2}){0,2})?$/.test(at)) {
    throw new BackendError(`not a dead-letter search cursor: "${cursor.slice(0, 80)}"`, {
      code: "CURSOR_INVALID",
      hint: "pass back the nextCursor of the previous page unchanged",
      docs: "jfast docs admin-api#job-search",
    });
  }
  return [at, seq];
}

function splitFound<K extends string>(ids: string[], rows: Array<{ id: string }>, key: K): { [P in K]: string[] } & { missing: string[] } {
  const found = new Set(rows.map((r) => r.id));
  return {
    [key]: ids.filter((id) => found.has(id)),
    missing: ids.filter((id) => !found.has(id)),
  } as { [P in K]: string[] } & { missing: string[] };
}

export function createPostgresBackend(options: PostgresBackendOptions): PostgresBackend {
  return new PostgresBackend(options);
}
