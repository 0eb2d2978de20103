import type { AttemptError, Job, JobJSON } from "./job.js";
import type { JobState } from "./job-state.js";
import type { LeaseExtenderSpec } from "./lease-extender.js";
import type { LimitMap, LimitUsage } from "./limits.js";
import type { PauseStore } from "./pause.js";
import type { PruneParams } from "./retention.js";
import type { ThroughputStore } from "./throughput.js";

/**
 * The seam every queue backend implements (memory, postgres, redis, rabbitmq). Backends are leaves: they
 * import core and errors only, translate driver errors into JfastError at this boundary, and never hand
 * driver rows back.
 *
 * Protocol (at-least-once):
 *  - `claim` leases jobs for `leaseMs` and counts the attempt (attempts + 1) before the handler runs, so an
 *    attempt whose worker vanishes is never free. An expired lease makes the job claimable again; if that
 *    lost attempt was its last, claiming sets it dead with reason "worker lost" instead.
 *  - exactly one of `complete`, `retry`, `kill`, `release` or `snooze` ends a claim. `release` and `snooze` give the
 *    attempt back.
 *  - `cancel` ends a job for good whatever it is doing; a running one's worker learns it from its next heartbeat.
 *  - `enqueue` with an id that already exists is a no-op (how events and schedules stay idempotent).
 */
/**
 * An idle worker's free slots, offered to jobs enqueued in its own process (`QueueBackend.offerSlots`).
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

export interface QueueBackend {
  readonly kind: BackendKind;
  /**
   * The broker hands this process messages ahead of its claims (RabbitMQ's prefetch): a worker then keeps no
   * buffer of its own and tells the backend its prefetch target with each claim (`ClaimParams.pushAhead`)
   * instead. A local buffer would hold deliveries that die with their channel and run them anyway.
   */
  readonly pushesAhead?: boolean;
  /** Creates tables / keys / broker topology. Idempotent and safe with several processes at once. */
  setup(): Promise<void>;
  close(): Promise<void>;
  enqueue(params: { jobs: Job[] }): Promise<EnqueueResult>;
  claim(params: ClaimParams): Promise<Job[]>;
  /**
   * Heartbeat: pushes the lease of jobs this worker still runs, and tells which of them were cancelled meanwhile
   * (their handlers' signals are then aborted with reason "cancelled").
   */
  extendLeases(params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport>;
  /**
   * Where a heartbeat thread extends these leases on a connection of its own, so that a handler blocking the event
   * loop does not lose its job to another process (core/lease-extender.ts). Absent or null: the leases are judged
   * in this process only (memory, PGlite, RabbitMQ's deliveries).
   */
  leaseExtender?(): LeaseExtenderSpec | null;
  complete(params: { workerId: string; job: Job }): Promise<void>;
  /** Records the failed attempt and makes the job claimable again at `availableAt`. */
  retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void>;
  /** Records the final error and moves the job to dead letters. */
  kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void>;
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
   * A backend that cannot find a waiting job to cancel throws NotSupportedError.
   */
  cancel(params: { id: string }): Promise<CancelResult>;
  /**
   * Resolves when work may be available (a wake-up, a delayed job coming due) or after `timeoutMs`,
   * whichever is first, or when `signal` aborts. Never busy-waits. A wake-up is a hint, not a promise:
   * the caller claims afterwards and may find nothing.
   */
  waitForWork(params: { signal: AbortSignal; timeoutMs: number; pausedTasks?: readonly string[] }): Promise<void>;
  /**
   * Optional (PostgreSQL, Redis): an idle worker of this process offers its free slots while it waits for work,
   * and `enqueue` in this process stores due jobs already claimed by it and hands them over in memory, one write
   * instead of a write, a wake-up and a claim (docs/postgres.md#in-process-hand-off,
   * docs/redis.md#in-process-hand-off). Returns the withdrawal.
   */
  offerSlots?(offer: SlotOffer): () => void;
  /**
   * The queue's task limits (docs/tasks.md#limits), given once at start before any claim: every process of the
   * service declares the same. The claim then starts a limited task's job only within its limits, and leaves the
   * others waiting (their attempt unspent) while it hands out other tasks' jobs. An empty map: no limit, and the
   * claim keeps its plain path. A backend that has nothing to hold the counts in across processes (RabbitMQ without
   * the database) throws NotSupportedError for a non-empty map.
   */
  setLimits(params: { limits: LimitMap }): Promise<void>;
  /** What a limited task uses of its limits now (for "waits on concurrency 5 of x: 5 running"). */
  limitUsage(params: { task: string }): Promise<LimitUsage>;
  /** Dead letters, newest death first. */
  listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]>;
  /** Requeues dead jobs with attempts reset. Ids that are not dead letters come back in `missing`. */
  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }>;
  /** Deletes dead letters for good. */
  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }>;
  depths(): Promise<Depths>;
  /**
   * Depths per task, optionally of one tenant's jobs. `exact: false` when the backend counted a bounded sample
   * and scaled it, or counted one tenant's dead letters among the newest only. A backend that cannot count per
   * task (RabbitMQ: a queue holds every task's messages and cannot be read without taking them) throws
   * NotSupportedError.
   */
  depthsByTask(params?: { tenantId?: string | undefined }): Promise<TaskDepths>;
  getJob(params: { id: string }): Promise<JobInfo | null>;
  /**
   * One page of the jobs in a listing state (docs/admin-api.md#listing-jobs), in the order of that state's own
   * index, never by counting or sorting the whole state: a page reads at most a bounded window of entries after
   * `after`, keeps those matching the filters, and `next` continues after the last entry it read. A page can
   * therefore hold fewer than `limit` rows while `next` is not null. `id` is an exact id (a lookup by key). A state
   * the backend keeps no index of (RabbitMQ's waiting messages) throws NotSupportedError saying why.
   */
  listJobs(params: ListJobsParams): Promise<JobListing>;
  /**
   * Makes a waiting job (ready or scheduled, backing off or snoozed) due now. A job in any other state is left
   * as it is (`done: false`, its state; null: no such job).
   */
  runNow(params: { id: string }): Promise<JobActionResult>;
  /** Deletes a waiting job (ready or scheduled) for good; any other state is left as it is. */
  deleteJob(params: { id: string }): Promise<JobActionResult>;
  /**
   * Dead letters whose payload has `payload.path` equal to `payload.equals`, newest death first, through an index
   * (PostgreSQL). A backend without such an index throws NotSupportedError; the admin API then reads a bounded
   * number of dead letters instead and says so.
   */
  searchDead(params: DeadSearch): Promise<{ rows: DeadJob[]; next: string | null }>;
  /**
   * Deletes one bounded batch of finished jobs in `state` (docs/queues.md#retention): those that finished (or died)
   * before `select.before`, or every one but the newest `select.keepNewest`; at most `limit`, oldest first, never
   * waiting on a job another call holds. Returns how many went. A backend that stores no job in that state returns 0.
   */
  prune(params: PruneParams): Promise<number>;
  /**
   * The pruner's claim on this queue: true when no other pruner, in any process, holds it; then it is `owner`'s
   * until `releasePruner` or, should the owner vanish, until `ttlMs` has passed. One pruner at a time per queue.
   */
  claimPruner(params: { owner: string; ttlMs: number }): Promise<boolean>;
  releasePruner(params: { owner: string }): Promise<void>;
  /**
   * The backend's own store of paused tasks, when its claim reads that store itself (Redis). null: the service
   * keeps paused tasks in its database, or in memory for the memory queue (core/pause.ts).
   */
  pauseStore(): PauseStore | null;
  /**
   * Where the backend can keep per-minute throughput counts itself (Redis, with expiring keys), used when the
   * service has no database. null: the database, else memory (core/throughput.ts).
   */
  throughputStore(): ThroughputStore | null;
}

export const BackendKind = {
  memory: "memory",
  postgres: "postgres",
  redis: "redis",
  rabbitmq: "rabbitmq",
} as const;
export type BackendKind = (typeof BackendKind)[keyof typeof BackendKind];

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
   * For a backend whose broker pushes ahead (`pushesAhead`): how many jobs beyond the worker's slots the broker
   * may push to it, the worker's prefetch target (docs/worker.md#concurrency). Other backends ignore it.
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

export type RetryDeadParams = { ids: string[] } | { all: true };

export interface Depths {
  /** Claimable now. */
  ready: number;
  /** Waiting for their time: delayed or backing off before a retry. */
  scheduled: number;
  running: number;
  dead: number;
}

export interface DeadSearch {
  /** Object keys from the payload's root, and the value found there (same JSON type: 42 is not "42"). */
  payload: { path: string[]; equals: string | number | boolean };
  task?: string | undefined;
  tenantId?: string | undefined;
  limit: number;
  /** `next` of the previous page. */
  after?: string | undefined;
}

/**
 * The states a listing shows: the job states, with waiting jobs split as depths split them (ready: due now;
 * scheduled: waiting for their time, delayed, backing off or snoozed).
 */
export const ListState = {
  ready: "ready",
  scheduled: "scheduled",
  running: "running",
  completed: "completed",
  dead: "dead",
  cancelled: "cancelled",
} as const;
export type ListState = (typeof ListState)[keyof typeof ListState];

export const ListOrder = { newest: "newest", oldest: "oldest" } as const;
export type ListOrder = (typeof ListOrder)[keyof typeof ListOrder];

export interface ListJobsParams {
  state: ListState;
  /**
   * By the state's own time: ready, scheduled and running by the time they are (were) due, completed and
   * cancelled by the time they finished (the memory queue and Redis) or by id (PostgreSQL, see its docs), dead by
   * the time of death.
   */
  order: ListOrder;
  task?: string | undefined;
  tenantId?: string | undefined;
  /** An exact job id. */
  id?: string | undefined;
  limit: number;
  /** `next` of the previous page with the same state and order, unchanged. */
  after?: string | undefined;
}

export interface JobListing {
  rows: JobInfo[];
  /** Continues after the last entry this page read; null when the state has nothing more in this order. */
  next: string | null;
  /**
   * False when pages are positions rather than keys (Redis's ready list, where claims shift what follows), so
   * a job can be skipped or shown twice across pages while the queue moves.
   */
  exact: boolean;
}

export interface JobActionResult {
  /** True when this call changed the job. */
  done: boolean;
  /** The job's state after the call (ready for a job run now); null when there is no such job. */
  state: JobState | null;
}

export interface TaskDepths {
  /** Keyed by task name; a task with no job in any of the four states is absent. */
  tasks: Record<string, Depths>;
  exact: boolean;
}

export interface DeadJob {
  job: JobJSON;
  diedAt: string;
  /** The error that killed it (the last one recorded). */
  lastError: AttemptError | null;
}

export interface JobInfo {
  job: JobJSON;
  state: JobState;
  lockedBy: string | null;
  lockedUntil: string | null;
  diedAt: string | null;
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
