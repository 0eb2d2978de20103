import type { Job } from "../../core/job.js";
import type { IntervalSpec } from "../../core/task.js";
import type { SqlExecutor } from "../../core/sql-port.js";

/**
 * Where replicas agree on who fires a tick. Every replica and worker runs the scheduler; before enqueueing a
 * tick each one claims it here, and only the winning claim enqueues. A claim of a schedule wins only when no
 * claim of that schedule is at or after its tick, so the last tick never moves backwards, whatever the clocks.
 */
export interface ScheduleStore {
  readonly kind: "memory" | "postgres" | "redis";
  /** The last claimed tick (epoch ms) of each named schedule. Absent: never claimed, the schedule is new. */
  lastTicks(params: { names: string[] }): Promise<Map<string, number>>;
  /**
   * Claims `tick` of schedule `name` and, if the claim wins, enqueues `job`. True when this call won.
   * When the enqueue fails the claim is undone (or never committed) and the error is thrown, so a later
   * pass takes the tick again.
   */
  claim(params: { name: string; tick: number; job: Job }): Promise<boolean>;
  /**
   * Claims of schedule `name` whose tick is in [from, to] (epoch ms): how many, the first, and whether the
   * schedule was claimed before `from` (so it is not new). For the admin API's missed ticks.
   */
  tickClaims(params: { name: string; from: number; to: number }): Promise<TickClaims>;
  /** Deletes claims made before `before` (epoch ms), keeping each schedule's last. Returns how many went. */
  prune(params: { before: number }): Promise<number>;
  /**
   * The store's clock (epoch ms): the time every replica's ticks are due by, so that a process whose own clock
   * is off neither fires ticks early nor claims ticks ahead of the others (docs/scheduler.md#clocks). Absent: the
   * store lives in the process (memory), whose clock is the reference.
   */
  serverTime?(): Promise<number>;
  /** Schedules made at run time, and the pause state of declared ones (docs/scheduler.md#at-run-time). Read every pass. */
  schedules(): Promise<StoredSchedule[]>;
  /** `create`: stores it only if no schedule has that name (false when one has). Otherwise replaces it. */
  saveSchedule(params: { schedule: StoredSchedule; create: boolean }): Promise<boolean>;
  /** Removes the stored schedule; its claims stay (pruned with the others). False when there was none. */
  deleteSchedule(params: { name: string }): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A schedule kept in the store. Made at run time it carries its `spec`; for a schedule declared in code the
 * store holds only its run-time state (`spec` null): whether it is paused, and since when it fires.
 */
export interface StoredSchedule {
  name: string;
  spec: StoredScheduleSpec | null;
  paused: boolean;
  /**
   * Ticks at or before this (epoch ms) never fire: the schedule was made, edited or resumed then. So a schedule
   * resumed after a week does not fire the tick it missed, and an edited one starts with the new expression's
   * next tick; a process that sees the change late still fires the first tick after it.
   */
  since: number;
  updatedAt: number;
  updatedBy: string | null;
}

export interface StoredScheduleSpec {
  task: string;
  cron?: string;
  every?: IntervalSpec;
  timezone?: string;
  payload: Record<string, unknown>;
  catchUp: boolean;
}

export interface TickClaims {
  claimed: number;
  first: number | null;
  before: boolean;
}

/** Enqueues jobs that commit on their own (the queue provider's enqueue). */
export type EnqueueJobs = (jobs: Job[]) => Promise<unknown>;

/** Enqueues jobs inside a caller's SQL transaction (the PostgreSQL queue in the same database). */
export type EnqueueJobsWithin = (executor: SqlExecutor, jobs: Job[]) => Promise<unknown>;
