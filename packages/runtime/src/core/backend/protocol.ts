import type { FlowPlanStep } from "../flow.js";
import type { AttemptError, Job } from "../job.js";
import type { JobState } from "../job-state.js";
import type { LeaseExtenderSpec } from "../lease-extender.js";
import type { LimitMap, LimitUsage } from "../limits.js";
import type { StoredResult } from "../result.js";
import type { AttemptRun, JobProgress } from "../job-life.js";
import type { SqlExecutor } from "../sql-port.js";

/**
 * What a worker needs of a backend: the job protocol (at-least-once).
 *  - `claim` leases jobs for `leaseMs` and counts the attempt (attempts + 1) before the handler runs, so an
 *    attempt whose worker vanishes is never free. An expired lease makes the job claimable again; if that
 *    lost attempt was its last, claiming sets it dead with reason "worker lost" instead.
 *  - exactly one of `complete`, `retry`, `kill`, `release` or `snooze` ends a claim. `release` and `snooze` give the
 *    attempt back.
 *  - `cancel` ends a job for good whatever it is doing; a running one's worker learns it from its next heartbeat.
 *  - `enqueue` with an id that already exists is a no-op (how events and schedules stay idempotent).
 * A member whose capability is off (core/backend/capabilities.ts) throws NotSupportedError.
 */
export interface JobProtocol {
  /** Creates tables / keys / broker topology. Idempotent and safe with several processes at once. */
  setup(): Promise<void>;
  close(): Promise<void>;
  /** Throws NotSupportedError for a unique job where `capabilities.unique` is off, and a priority where `priority` is. */
  enqueue(params: { jobs: Job[] }): Promise<EnqueueResult>;
  /**
   * `capabilities.transactionalEnqueue` (the PostgreSQL queue in the service's database): writes the jobs in the
   * caller's SQL transaction, so they exist iff it commits (docs/outbox.md).
   */
  enqueueWithin(params: { executor: SqlExecutor; jobs: Job[] }): Promise<EnqueueResult>;
  claim(params: ClaimParams): Promise<Job[]>;
  /**
   * Heartbeat: pushes the lease of jobs this worker still runs, and tells which of them were cancelled meanwhile
   * (their handlers' signals are then aborted with reason "cancelled").
   */
  extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport>;
  /**
   * `capabilities.leaseThread`: where a heartbeat thread extends these leases on a connection of its own, so that a
   * handler blocking the event loop does not lose its job to another process (core/lease-extender.ts). Off: the
   * leases are judged in this process only (memory, PGlite, RabbitMQ's deliveries).
   */
  leaseExtender(): LeaseExtenderSpec;
  /**
   * `result` (core/result.ts) is stored with the completed job, in the same write, where the backend keeps finished
   * jobs (`capabilities.keepsFinished`); undefined stores nothing. It goes when the job is pruned or deleted.
   */
  complete(params: CompleteParams): Promise<void>;
  /** Records the failed attempt and makes the job claimable again at `availableAt`. */
  retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date; run?: AttemptRun | undefined }): Promise<void>;
  /**
   * The job's deadline passed before it started (docs/flow-control.md#deadlines): it ends `expired` with `error`
   * recorded and the claim's attempt given back, and never runs. Like kill, only while it is still this worker's.
   */
  expire(params: { workerId: string; job: Job; error: AttemptError }): Promise<void>;
  /** Records the final error and moves the job to dead letters. */
  kill(params: { workerId: string; job: Job; error: AttemptError; run?: AttemptRun | undefined }): Promise<void>;
  /**
   * `tools.progress` (docs/jobs.md#progress): stores the running job's progress, only while `workerId` still owns it
   * (a late write after its outcome changes nothing). Called at most about once a second per job, only by handlers
   * that report progress; the last value goes with the attempt's outcome write (`run.progress`).
   */
  setProgress(params: { workerId: string; job: Job; progress: JobProgress }): Promise<void>;
  /**
   * Puts running (or claimed, not started) jobs back and returns their attempt: graceful shutdown, and a paused
   * task's jobs a backend could not filter at claim, handed back claimable again at `availableAt` (default now).
   */
  release(params: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void>;
  /**
   * The handler returned `snooze(ms)`: like `release` of one job at `availableAt` (the attempt given back), with
   * the job's snooze count raised by one — unless it already reached `maxSnoozes`, then the job is left as it is
   * (still this worker's) and `snoozed` is false; the worker then dead-letters it. Also false when the job is no
   * longer this worker's.
   */
  snooze(params: SnoozeParams): Promise<{ snoozed: boolean }>;
  /**
   * Cancels a job: a ready or scheduled one becomes `cancelled` and is never claimed; a running one becomes
   * `cancelled` at once too (no outcome its worker writes afterwards changes it, no lease expiry revives it) and
   * its worker learns it through extendLeases. A finished job is left as it is (`cancelled: false`, its state).
   * `capabilities.cancellation` false: NotSupportedError.
   */
  cancel(params: { id: string }): Promise<CancelResult>;
  /**
   * Resolves when work may be available (a wake-up, a delayed job coming due) or after `timeoutMs`,
   * whichever is first, or when `signal` aborts. Never busy-waits. A wake-up is a hint, not a promise:
   * the caller claims afterwards and may find nothing.
   */
  waitForWork(params: { signal: AbortSignal; timeoutMs: number; pausedTasks?: readonly string[] }): Promise<void>;
  /**
   * `capabilities.handOff` (PostgreSQL, Redis): an idle worker of this process offers its free slots while it waits
   * for work, and `enqueue` in this process stores due jobs already claimed by it and hands them over in memory,
   * one write instead of a write, a wake-up and a claim (docs/postgres.md#in-process-hand-off,
   * docs/redis.md#in-process-hand-off). Returns the withdrawal.
   */
  offerSlots(offer: SlotOffer): () => void;
  /**
   * The queue's task limits (docs/tasks.md#limits), given once at start before any claim: every process of the
   * service declares the same. The claim then starts a limited task's job only within its limits, and leaves the
   * others waiting (their attempt unspent) while it hands out other tasks' jobs. An empty map: no limit, and the
   * claim keeps its plain path. `capabilities.limits` off: NotSupportedError for a non-empty map.
   */
  setLimits(params: { limits: LimitMap }): Promise<void>;
  /** What a limited task uses of its limits now (for "waits on concurrency 5 of x: 5 running"). */
  limitUsage(params: { task: string }): Promise<LimitUsage>;
}

/**
 * An idle worker's free slots, offered to jobs enqueued in its own process (`JobProtocol.offerSlots`).
 * The backend reserves slots before it writes, so concurrent enqueues never hand over more than are free,
 * and settles every reservation exactly once: `deliver` after its commit, `cancel` when the write failed.
 */
export interface SlotOffer {
  readonly workerId: string;
  readonly leaseMs: number;
  /** Tasks whose jobs must not be handed over (paused). */
  pausedTasks(): readonly string[];
  /** Takes up to `wanted` free slots; how many it got (0 when the worker is full or stopping). */
  reserve(wanted: number): number;
  /** The claimed jobs (attempt counted, leased to this worker, committed) for `reserved` slots; at most that many. */
  deliver(jobs: Job[], reserved: number): void;
  /** The write failed: the `reserved` slots are free again. */
  cancel(reserved: number): void;
}

export interface CompleteParams {
  workerId: string;
  job: Job;
  result?: StoredResult | undefined;
  /**
   * A flow step's spawned steps (`tools.flow.spawn`, core/flow.ts planSpawn): written with the completion, in the
   * same write, only when it completes the job; the flow's total grows by their number (`capabilities.flows`).
   */
  spawn?: FlowPlanStep[] | undefined;
  /**
   * The attempt's record (core/job-life.ts: its timing, worker, last progress and log lines), kept with the job in
   * the same write as the outcome (docs/jobs.md#timing). retry, kill and snooze take it too.
   */
  run?: AttemptRun | undefined;
}

export interface ClaimParams {
  workerId: string;
  limit: number;
  leaseMs: number;
  /**
   * Tasks not to hand out (paused), as the worker last read them. A backend that can filter at claim leaves
   * their jobs queued (memory, PostgreSQL); Redis reads its own paused set instead; RabbitMQ cannot filter and
   * the worker releases what it should not run. Also passed to waitForWork, so paused jobs do not wake it.
   */
  pausedTasks?: readonly string[];
  /**
   * For a backend whose broker pushes ahead (`capabilities.pushesAhead`): how many jobs beyond the worker's slots
   * the broker may push to it, the worker's prefetch target (docs/worker.md#concurrency). Other backends ignore it.
   */
  pushAhead?: number;
  /**
   * How many of the claimed jobs start at once (the worker's free slots; the rest of `limit` it buffers): a limited
   * task's jobs are claimed only within it, since their start is counted at claim (docs/tasks.md#limits). Default
   * `limit`.
   */
  startable?: number;
}

export interface SnoozeParams {
  workerId: string;
  job: Job;
  availableAt: Date;
  /** `[plugin.queue] max_snoozes`: the snoozes a job may have had before this one. */
  maxSnoozes: number;
  run?: AttemptRun | undefined;
}

export interface LeaseReport {
  /** Ids among the heartbeat's jobs that were cancelled. */
  cancelled: string[];
}

export interface CancelResult {
  /** True when this call cancelled the job (it was ready, scheduled or running). */
  cancelled: boolean;
  /** The job's state after the call; null when there is no such job. */
  state: JobState | null;
}

export interface EnqueueResult {
  /** Ids written now; an id that already existed is left out, and so is a duplicate. */
  inserted: string[];
  /** Unique jobs not added because another job holds their key: their id → the holder's id. Absent when none. */
  duplicates?: ReadonlyMap<string, string>;
}

/** What `queue.enqueue` and `outbox.enqueue` return: the backend's result and each job's outcome, in order. */
export interface QueueEnqueueResult extends EnqueueResult {
  jobs: EnqueuedJob[];
}

export interface EnqueuedJob {
  /** The job's id, or the id of the job holding its unique key when it is a duplicate. */
  id: string;
  duplicate: boolean;
}

export const WORKER_LOST = "worker lost";

/** The error recorded for an attempt whose lease expired while its worker was gone. */
export function workerLostError(attempt: number): AttemptError {
  return {
    attempt,
    at: new Date().toISOString(),
    class: "WorkerLost",
    message: "the worker running this attempt stopped heartbeating and its lease expired",
    reason: WORKER_LOST,
  };
}
