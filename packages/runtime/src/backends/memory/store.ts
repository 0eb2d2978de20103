import type { Job, JobJSON } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { JobInfo } from "../../core/queue-backend.js";
import type { LimitMap, StartWindow } from "../../core/limits.js";
import { resultFields, type StoredResult } from "../../core/result.js";
import { stepDied, type MemoryFlow } from "./flows.js";

export interface Entry {
  json: ReturnType<Job["toJSON"]>;
  state: JobState;
  lockedBy: string | null;
  lockedUntil: number | null;
  diedAt: number | null;
  seq: number;
  /** Times the job returned snooze(ms) (kept beside the job, like the other backends' column, field or header). */
  snoozes: number;
  /** When it completed or was cancelled (the order of those listings). */
  finishedAt: number | null;
  /** What its handler returned, when it completed with a value (docs/tasks.md#results). */
  result?: StoredResult;
  /** A flow step's bookkeeping (flows.ts): the steps after it, how many parents it waits for, whether its outcome was counted. */
  flow?: { children: string[]; pending: number; counted: boolean };
}

/** Everything the memory queue holds; the operations (claim.ts, admin.ts, ...) read and change it. */
export class MemoryStore {
  readonly entries = new Map<string, Entry>();
  readonly waiters = new Set<() => void>();
  /** Unique keys (scoped) → the job holding it, and until when for a key held for a period. Checked lazily. */
  readonly uniqueKeys = new Map<string, { id: string; until: number | null }>();
  /** Flows and batches by id (flows.ts). */
  readonly flows = new Map<string, MemoryFlow>();
  seq = 0;
  closed = false;
  /** Task limits (docs/tasks.md#limits): the running count is read from the entries, the starts kept here. */
  limits: LimitMap = new Map();
  readonly starts = new Map<string, StartWindow>();
  /** The pruner's lease: one pruner at a time, as the other backends hold it across processes. */
  pruner: { owner: string; until: number } | null = null;

  /** Jobs running under a live lease, per task. */
  runningOf(now: number): Map<string, number> {
    const running = new Map<string, number>();
    for (const e of this.entries.values()) {
      if (e.state === JobState.running && (e.lockedUntil ?? 0) >= now) running.set(e.json.task, (running.get(e.json.task) ?? 0) + 1);
    }
    return running;
  }

  /** How many more jobs of each limited task may start now. */
  allowances(now: number): Map<string, number> {
    const allowed = new Map<string, number>();
    if (this.limits.size === 0) return allowed;
    const running = this.runningOf(now);
    for (const [task, limit] of this.limits) {
      let n = Infinity;
      if (limit.concurrency !== null) n = limit.concurrency - (running.get(task) ?? 0);
      const window = this.starts.get(task);
      if (window) n = Math.min(n, window.room(now));
      allowed.set(task, Math.max(0, n));
    }
    return allowed;
  }

  owned(id: string, workerId: string): Entry | undefined {
    const entry = this.entries.get(id);
    // A worker whose lease was taken over must not overwrite the new owner's outcome.
    return entry && entry.state === JobState.running && entry.lockedBy === workerId ? entry : undefined;
  }

  markDead(entry: Entry, now: number): void {
    entry.state = JobState.dead;
    entry.diedAt = now;
    entry.lockedBy = null;
    entry.lockedUntil = null;
    if (entry.flow) stepDied(this, entry);
  }

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  info(e: Entry): JobInfo {
    return {
      job: structuredClone(e.json),
      state: e.state,
      lockedBy: e.lockedBy,
      lockedUntil: e.lockedUntil === null ? null : new Date(e.lockedUntil).toISOString(),
      diedAt: e.diedAt === null ? null : new Date(e.diedAt).toISOString(),
      ...(e.result && e.state === JobState.completed ? resultFields(structuredClone(e.result)) : {}),
    };
  }
}

/** A new entry of the store for `job` (enqueue, a flow's steps). */
export function newEntry(store: MemoryStore, job: Job, state: JobState, flow?: Entry["flow"]): Entry {
  return {
    json: storedJSON(job),
    state,
    lockedBy: null,
    lockedUntil: null,
    diedAt: null,
    seq: store.seq++,
    snoozes: 0,
    finishedAt: null,
    ...(flow ? { flow } : {}),
  };
}

/** A stored copy, through JSON as every other backend stores it. */
export function storedJSON(job: Job): JobJSON {
  // A Date becomes its string, -0 becomes 0, a property that is undefined or a function is left out
  // (structuredClone would keep them, or throw on a function).
  return JSON.parse(JSON.stringify(job.toJSON())) as JobJSON;
}
