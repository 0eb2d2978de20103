import type { AttemptError, JobJSON } from "../job.js";
import type { JobState } from "../job-state.js";
import type { AttemptInfo, JobLogLine, JobProgress } from "../job-life.js";
import type { StoredParts, StoredRewriteResult } from "../stored-rewrite.js";

/**
 * What the admin API, the CLI and the dashboard read and repair: views of the stored jobs and the repairs one job
 * at a time. A view a backend cannot give (its capability off, core/backend/capabilities.ts) throws
 * NotSupportedError saying why.
 */
export interface AdminViews {
  getJob(params: { id: string }): Promise<JobInfo | null>;
  /**
   * One page of the jobs in a listing state (docs/admin-api.md#listing-jobs), in the order of that state's own
   * index, never by counting or sorting the whole state: a page reads at most a bounded window of entries after
   * `after`, keeps those matching the filters, and `next` continues after the last entry it read. A page can
   * therefore hold fewer than `limit` rows while `next` is not null. `id` is an exact id (a lookup by key). A state
   * not in `capabilities.listableStates` (RabbitMQ's waiting messages) throws NotSupportedError saying why.
   */
  listJobs(params: ListJobsParams): Promise<JobListing>;
  depths(): Promise<Depths>;
  /**
   * Depths per task, optionally of one tenant's jobs. `exact: false` when the backend counted a bounded sample
   * and scaled it, or counted one tenant's dead letters among the newest only. `capabilities.perTaskDepths` off
   * (RabbitMQ: a queue holds every task's messages and cannot be read without taking them): NotSupportedError.
   */
  depthsByTask(params?: { tenantId?: string | undefined }): Promise<TaskDepths>;
  /** Dead letters, newest death first. */
  listDead(params: { limit: number; offset?: number }): Promise<DeadJob[]>;
  /**
   * Dead letters whose payload has `payload.path` equal to `payload.equals`, newest death first, through an index
   * (`capabilities.payloadIndex`: PostgreSQL). Off: NotSupportedError; the admin API then reads a bounded number of
   * dead letters instead and says so.
   */
  searchDead(params: DeadSearch): Promise<{ rows: DeadJob[]; next: string | null }>;
  /**
   * The jobs carrying `requestId` (docs/admin-api.md#timeline), oldest first, at most `limit`, through an index
   * (`capabilities.requestIndex`: PostgreSQL; the memory queue reads its own entries). Off: NotSupportedError;
   * the admin API then reads a bounded window of each listable state instead and says so.
   */
  jobsByRequest(params: { requestId: string; limit: number }): Promise<RequestJob[]>;
  /** Requeues dead jobs with attempts reset. Ids that are not dead letters come back in `missing`. */
  retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }>;
  /** Deletes dead letters for good. */
  discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }>;
  /**
   * Makes a waiting job (ready or scheduled, backing off or snoozed) due now. A job in any other state is left
   * as it is (`done: false`, its state; null: no such job). `capabilities.jobActions` off: NotSupportedError.
   */
  runNow(params: { id: string }): Promise<JobActionResult>;
  /** Deletes a waiting job (ready or scheduled) for good; any other state is left as it is. As runNow. */
  deleteJob(params: { id: string }): Promise<JobActionResult>;
  /**
   * Changes a waiting job's payload, priority or run time (`jobs.update`, docs/admin-api.md#editing-a-waiting-job)
   * in one atomic step, only while it is still ready or scheduled: any other state is left as it is (`done:
   * false`, its state; null: no such job). `task` is the job's task as read before (an encrypting backend seals
   * the payload by it). As runNow for `capabilities.jobActions`.
   */
  updateJob(params: JobUpdate): Promise<JobActionResult>;
  /**
   * Rewrites in place the payload and errors of waiting jobs and dead letters: how `jfast keys rotate` re-encrypts
   * them (core/stored-rewrite.ts, docs/security.md#encryption-at-rest).
   */
  rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult>;
  /**
   * The keys a dead job blocks (docs/flow-control.md#order-per-key): tasks with `orderedBy` and onDead "block",
   * oldest death first. `capabilities.orderPerKey` off: NotSupportedError.
   */
  blockedKeys(params: { limit: number }): Promise<BlockedKey[]>;
  /** Lets a blocked key's next job start: its dead jobs stay dead letters but no longer hold the key. */
  skipBlockedKey(params: { task: string; key: string }): Promise<{ skipped: string[] }>;
}

/** A key of a task with `orderedBy` held by a dead job (docs/flow-control.md#order-per-key). */
export interface BlockedKey {
  task: string;
  key: string;
  /** The dead job holding the key (the oldest, when several died). */
  jobId: string;
  diedAt: string;
  /** Jobs of the key waiting behind it. */
  waiting: number;
}

/** A job found by its request id, with the time it finished (completed, cancelled or dead) where the backend keeps it. */
export interface RequestJob {
  info: JobInfo;
  finishedAt: string | null;
}

export type RetryDeadParams = { ids: string[] } | { all: true };

export interface Depths {
  /** Claimable now. */
  ready: number;
  /** Waiting for their time: delayed or backing off before a retry. */
  scheduled: number;
  running: number;
  dead: number;
  /**
   * Present (true) when `ready` or `scheduled` is an estimate: the PostgreSQL queue counts each exactly up to
   * 50 000 jobs and estimates a larger backlog from a sample of its table (docs/postgres.md#a-large-backlog-exact-up-to-50-000-estimated-beyond).
   */
  estimated?: true;
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
  expired: "expired",
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

/** What `updateJob` changes; an absent field keeps its value. */
export interface JobUpdate {
  id: string;
  task: string;
  payload?: unknown;
  /** 0 runs first, 9 last. */
  priority?: number | undefined;
  /** When the job may run; now or earlier makes it due. */
  availableAt?: Date | undefined;
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
  /** A completed job's result, as its handler returned it (through JSON); absent when none was stored. */
  result?: unknown;
  /** Why a completed job's result was not stored (too large, not JSON). */
  resultOmitted?: string;
  /**
   * `tools.progress`: while it runs, the last value written (at most about a second old); once it ended, its last
   * attempt's last value. Absent when its handler never reported any (docs/jobs.md#progress).
   */
  progress?: JobProgress;
  /** Its attempts, oldest first, each with timing, worker, outcome, error, progress and log lines (docs/jobs.md#timing). */
  attempts?: AttemptInfo[];
  /** The last attempt's log lines (`tools.log`); every attempt's are under `attempts[].logs`. */
  logs?: JobLogLine[];
  /** When it was enqueued (its `createdAt`). */
  enqueuedAt?: string;
  /** From available to its first start; null before it started (or where it was not recorded). */
  waitMs?: number | null;
  /** A finished job's last attempt: when it ended and how long it ran. */
  finishedAt?: string;
  durationMs?: number;
}
