import type { AttemptError, Job } from "../../core/job.js";
import { LimitedTasks } from "../../core/backend/limited-tasks.js";
import { SlotOffers } from "../../core/backend/slot-offers.js";
import {
  BackendKind,
  notSupported,
  type BackendCapabilities,
  type CancelResult,
  type ClaimParams,
  type CompleteParams,
  type DeadJob,
  type DeadSearch,
  type Depths,
  type EnqueueResult,
  type JobActionResult,
  type JobUpdate,
  type JobInfo,
  type JobListing,
  type RequestJob,
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
import type { LimitMap, LimitUsage } from "../../core/limits.js";
import type { PauseStore } from "../../core/pause.js";
import type { PruneParams } from "../../core/retention.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { BlockedKey } from "../../core/backend/admin.js";
import * as blocked from "./blocked-keys.js";
import type { ThroughputStore } from "../../core/throughput.js";
import { BackendError } from "../../errors/jfast-error.js";
import * as admin from "./admin.js";
import { postgresCapabilities } from "./capabilities.js";
import { notificationChannel } from "./channel.js";
import { claim } from "./claim.js";
import { PREPARED, type PgQueue } from "./context.js";
import { enqueue, enqueueWithin } from "./enqueue.js";
import { DOCS, translate } from "./errors.js";
import { resultArrays, textArray } from "./job-rows.js";
import { SQL } from "./load-sql.js";
import type { StoredResult } from "../../core/result.js";
import * as maintenance from "./maintenance.js";
import * as outcomes from "./outcomes.js";
import { plainRuns, runsArray, timingArrays } from "./outcomes.js";
import type { JobProgress } from "../../core/job-life.js";
import { createWakeUps, type WakeUps } from "./wake-ups.js";
import type { FlowDetail, FlowSummary, ListFlowsParams } from "../../core/backend/flows.js";
import type { FlowPlan, ParentOutcome } from "../../core/flow.js";
import * as flows from "./flows.js";
import * as deadlines from "./deadlines.js";
import { createSqlWorkerStore, type WorkerStore } from "../../core/backend/workers.js";

/** A due job that the last claim did not get is locked by another claimer: look again soon, not at once. */
const RECHECK_MS = 100;
/**
 * With limited tasks, an idle worker looks again at least this often: a slot freed by another process, or a rate
 * window moving on, sends no notification (docs/tasks.md#limits).
 */
const LIMIT_RECHECK_MS = 250;

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
  private readonly queue: string;
  private readonly schema: string;
  private readonly logger: BackendLogger | undefined;
  /** What the operations work on (context.ts). */
  private readonly q: PgQueue;
  private readonly completions: CompletionBatcher;
  /** Flow steps' completions (complete-flow.sql, which also does the fan-in): never in a plain job's batch. */
  private readonly flowCompletions: CompletionBatcher;
  private readonly wakeUps: WakeUps;
  private readonly waiters = new Set<() => void>();
  /** Bumped by every notification: a wait that saw it change while arming itself returns at once. */
  private notifications = 0;
  private listening: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private listenFailed = false;
  private closed = false;
  private readonly connectionUrl: string | undefined;

  constructor(options: PostgresBackendOptions) {
    this.db = options.db;
    this.queue = options.queue;
    this.schema = options.schema;
    this.logger = options.logger;
    this.connectionUrl = options.connectionUrl;
    this.capabilities = postgresCapabilities(options);
    this.channel = notificationChannel(options.schema, options.queue);
    this.wakeUps = createWakeUps({ db: options.db, channel: this.channel, logger: options.logger });
    const [complete, name] = options.keepCompleted === false ? [SQL.completeDelete, PREPARED.completeDelete] : [SQL.complete, PREPARED.complete];
    // The ids as an array literal built here (textArray): node-postgres's own conversion escapes each element
    // through regular expressions, a visible share of a drain's time at hundreds of ids per write.
    // A batch with results (core/result.ts) takes complete-results.sql; keep_completed = false deletes the row, and
    // the results with it. Without results, the same statement as ever.
    // Attempts' records (core/job-life.ts) go the same way as results, in the same statement.
    this.completions = new CompletionBatcher(async (ids, workerId, results, runs) => {
      if (!results && runs && options.keepCompleted !== false && plainRuns(runs, ids.length)) {
        // Plain attempts' timing as numbers, their records built by the statement (complete-timed.sql).
        await this.run("complete", () => this.db.query(SQL.completeTimed, [textArray(ids), workerId, ...timingArrays(runs)], PREPARED.completeTimed));
      } else if ((results || runs) && options.keepCompleted !== false) {
        const [values, omitted] = results ? resultArrays(results) : [null, null];
        const params = [textArray(ids), workerId, values, omitted, runsArray(runs, ids.length)];
        await this.run("complete", () => this.db.query(SQL.completeResults, params, PREPARED.completeResults));
      } else await this.run("complete", () => this.db.query(complete, [textArray(ids), workerId], name));
    });
    // Flow steps are always kept, keep_completed or not: the steps after them read their results.
    this.flowCompletions = new CompletionBatcher((ids, workerId, results, runs) => flows.completeSteps(this.q, ids, workerId, results, runs));
    this.q = {
      db: options.db,
      reader: options.reader ?? options.db,
      queue: options.queue,
      schema: options.schema,
      channel: this.channel,
      logger: options.logger,
      wakeUps: this.wakeUps,
      offers: new SlotOffers(),
      limited: new LimitedTasks(),
      claimSql: options.durableClaims
        ? { all: SQL.claimDurable, one: SQL.claimOneDurable, prepared: PREPARED.claimDurable }
        : { all: SQL.claim, one: SQL.claimOne, prepared: PREPARED.claim },
      claimFairSql: options.durableClaims ? { text: SQL.claimFair, prepared: PREPARED.claimFair } : { text: SQL.claimFairAlone, prepared: PREPARED.claimFairAlone },
      fairClaims: 0,
      wakeUpsSeen: () => (this.unlisten ? this.notifications : null),
      listen: () => void this.ensureListening(),
      othersQuiet: null,
      run: (operation, fn) => this.run(operation, fn),
    };
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
    await this.flowCompletions.flush();
    await this.wakeUps.close();
    await this.listening;
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => undefined);
  }

  enqueue(params: { jobs: Job[] }): Promise<EnqueueResult> {
    return enqueue(this.q, params);
  }

  /**
   * Inserts the jobs through the caller's executor, i.e. inside their open transaction: the jobs exist iff that
   * transaction commits, and workers are woken once a look-up sees them committed (wake-ups.ts).
   */
  enqueueWithin(params: { executor: SqlExecutor; jobs: Job[] }): Promise<EnqueueResult> {
    return enqueueWithin(this.q, params);
  }

  offerSlots(offer: SlotOffer): () => void {
    return this.q.offers.add(offer);
  }

  claim(params: ClaimParams): Promise<Job[]> {
    return claim(this.q, params);
  }

  leaseExtender(): LeaseExtenderSpec {
    const url = this.connectionUrl;
    if (!url) throw notSupported("leaseThread", "this PostgreSQL queue has no connection URL another thread could open (PGlite, embedded)");
    return { module: siblingModule(import.meta.url, "lease-extender"), options: { url, schema: this.schema } };
  }

  extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    return outcomes.extendLeases(this.q, params);
  }

  complete(params: CompleteParams): Promise<void> {
    const { workerId, job, result, spawn, run } = params;
    if (spawn && spawn.length > 0) return flows.completeSpawning(this.q, { ...params, spawn });
    return (job.flow ? this.flowCompletions : this.completions).add(job.id, workerId, result, run);
  }

  setProgress(params: { workerId: string; job: Job; progress: JobProgress }): Promise<void> {
    return outcomes.setProgress(this.q, params);
  }

  retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    return outcomes.retry(this.q, params);
  }

  kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    return outcomes.kill(this.q, params);
  }

  expire(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    return deadlines.expire(this.q, params);
  }

  expireDue(params: { limit: number }): Promise<number> {
    return deadlines.expireDue(this.q, params);
  }

  release(params: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    return outcomes.release(this.q, params);
  }

  snooze(params: SnoozeParams): Promise<{ snoozed: boolean }> {
    return outcomes.snooze(this.q, params);
  }

  cancel(params: { id: string }): Promise<CancelResult> {
    return outcomes.cancel(this.q, params);
  }

  /** One statement (enqueue-flow.sql): the flow's row and every step, or nothing when the flow exists. */
  enqueueFlow(params: { flow: FlowPlan }): Promise<{ created: boolean }> {
    return flows.enqueueFlow(this.q, params);
  }

  /** enqueueFlow through the caller's executor: the flow exists iff their transaction commits (outbox.flow). */
  enqueueFlowWithin(params: { executor: SqlExecutor; flow: FlowPlan }): Promise<{ created: boolean }> {
    return flows.enqueueFlowWithin(this.q, params);
  }

  parentOutcomes(params: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>> {
    return flows.parentOutcomes(this.q, params);
  }

  listFlows(params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }> {
    return flows.listFlows(this.q, params);
  }

  getFlow(params: { id: string }): Promise<FlowDetail | null> {
    return flows.getFlow(this.q, params);
  }

  cancelFlow(params: { id: string }): Promise<{ cancelled: string[] } | null> {
    return flows.cancelFlow(this.q, params);
  }

  setLimits(params: { limits: LimitMap }): Promise<void> {
    return maintenance.setLimits(this.q, params);
  }

  limitUsage(params: { task: string }): Promise<LimitUsage> {
    return maintenance.limitUsage(this.q, params);
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
    // A worker that waits looks for every kind of job at its next claim (claim.ts, othersQuiet).
    this.q.othersQuiet = null;
    await this.ensureListening();
    // Read the table only after LISTEN is active: a job enqueued before is seen by this query, one
    // enqueued after notifies us. Nothing falls in between.
    const seen = this.notifications;
    let dueInMs: number | null = null;
    try {
      // A limited task's due jobs may be over its limit: they do not wake this worker; LIMIT_RECHECK_MS does.
      const skipped = this.q.limited.size > 0 ? [...pausedTasks, ...this.q.limited.tasks] : pausedTasks;
      const [row] = await this.run("waitForWork", () => this.db.query<{ due_in_ms: number | string | null }>(SQL.nextDue, [this.queue, skipped], PREPARED.nextDue));
      dueInMs = row?.due_in_ms === null || row?.due_in_ms === undefined ? null : Number(row.due_in_ms);
    } catch (error) {
      this.logger?.warn("could not look up the next due job; waiting for the poll interval", { error });
    }
    if (signal.aborted || this.closed || this.notifications !== seen) return;
    let wait = dueInMs === null ? timeoutMs : Math.min(timeoutMs, dueInMs <= 0 ? RECHECK_MS : Math.ceil(dueInMs) + 1);
    if (this.q.limited.size > 0) wait = Math.min(wait, LIMIT_RECHECK_MS);
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

  getJob(params: { id: string }): Promise<JobInfo | null> {
    return admin.getJob(this.q, params);
  }

  listJobs(params: ListJobsParams): Promise<JobListing> {
    return admin.listJobs(this.q, params);
  }

  runNow(params: { id: string }): Promise<JobActionResult> {
    return admin.runNow(this.q, params);
  }

  deleteJob(params: { id: string }): Promise<JobActionResult> {
    return admin.deleteJob(this.q, params);
  }

  updateJob(params: JobUpdate): Promise<JobActionResult> {
    return admin.updateJob(this.q, params);
  }

  depths(): Promise<Depths> {
    return admin.depths(this.q);
  }

  depthsByTask(params?: { tenantId?: string | undefined }): Promise<TaskDepths> {
    return admin.depthsByTask(this.q, params);
  }

  listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return admin.listDead(this.q, params);
  }

  jobsByRequest(params: { requestId: string; limit: number }): Promise<RequestJob[]> {
    return admin.jobsByRequest(this.q, params);
  }

  searchDead(params: DeadSearch): Promise<{ rows: DeadJob[]; next: string | null }> {
    return admin.searchDead(this.q, params);
  }

  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    return admin.retryDead(this.q, params);
  }

  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    return admin.discardDead(this.q, params);
  }

  rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    return admin.rewriteStored(this.q, params);
  }

  blockedKeys(params: { limit: number }): Promise<BlockedKey[]> {
    return blocked.blockedKeys(this.q, params);
  }

  skipBlockedKey(params: { task: string; key: string }): Promise<{ skipped: string[] }> {
    return blocked.skipBlockedKey(this.q, params);
  }

  prune(params: PruneParams): Promise<number> {
    return maintenance.prune(this.q, params);
  }

  pruneKeys(params: { limit: number }): Promise<number> {
    return maintenance.pruneKeys(this.q, params);
  }

  claimPruner(params: { owner: string; ttlMs: number }): Promise<boolean> {
    return maintenance.claimPruner(this.q, params);
  }

  releasePruner(params: { owner: string }): Promise<void> {
    return maintenance.releasePruner(this.q, params);
  }

  /** Kept in the database by the service (jfast_paused_tasks), which this backend's claim is told about. */
  pauseStore(): PauseStore {
    throw notSupported("pauseStore", "the PostgreSQL queue keeps no store of paused tasks; the service keeps them in jfast_paused_tasks");
  }

  /** The service keeps throughput counts in its database, or in memory. */
  throughputStore(): ThroughputStore {
    throw notSupported("throughputStore", "the PostgreSQL queue keeps no throughput counts; the service keeps them in its database");
  }

  /** jfast_workers rows of this queue (migration 0028), written by each worker's own timer. */
  workerStore(): WorkerStore {
    const db = { query: <R,>(text: string, params?: readonly unknown[]) => this.run("worker registry", () => this.db.query<R>(text, params)) };
    return createSqlWorkerStore({ db, queue: this.queue, sql: { upsert: SQL.upsertWorker, remove: SQL.removeWorker, list: SQL.listWorkers } });
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

export function createPostgresBackend(options: PostgresBackendOptions): PostgresBackend {
  return new PostgresBackend(options);
}
