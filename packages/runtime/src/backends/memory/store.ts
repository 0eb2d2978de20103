import type { Job, JobJSON } from "../../core/job.js";
import { jobLifeFields, type AttemptRun, type JobProgress } from "../../core/job-life.js";
import { JobState } from "../../core/job-state.js";
import type { JobInfo } from "../../core/queue-backend.js";
import { StartWindow, type LimitMap, type OnDead, type RateLimit } from "../../core/limits.js";
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
  /** Its attempts' records (core/job-life.ts), added with each outcome. */
  runs?: AttemptRun[];
  /** `tools.progress` while it runs. */
  progress?: JobProgress;
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
  /** Tasks with per-key concurrency → the limit of each key (docs/flow-control.md#per-key-concurrency). */
  keyedTasks: ReadonlyMap<string, number> = new Map();
  /** Tasks with fair share across keys → their keys' weights; each key's served turns (task\u0000key → turns). */
  fairTasks: ReadonlyMap<string, Readonly<Record<string, number>>> = new Map();
  /** Fair tasks whose starts the claim counts nothing of (countsAtClaim): claimed for a worker's buffer too. */
  uncountedTasks: ReadonlySet<string> = new Set();
  readonly turns = new Map<string, number>();
  /** When each key last took a turn (a tick): of two tied turns, the key served longer ago goes first. */
  readonly turnTicks = new Map<string, number>();
  turnTick = 0;
  /** Tasks with `orderedBy` → what a dead job does to its key (docs/flow-control.md#order-per-key). */
  orderedTasks: ReadonlyMap<string, OnDead> = new Map();
  /** Tasks with a per-key rate limit → it; each key's recent starts (task\u0000key → window). */
  keyRates: ReadonlyMap<string, RateLimit> = new Map();
  readonly keyStarts = new Map<string, StartWindow>();
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

  /** Jobs running under a live lease, per task with per-key concurrency and key ("task\u0000key"). */
  runningByKey(now: number): Map<string, number> {
    const running = new Map<string, number>();
    for (const e of this.entries.values()) {
      if (e.json.limitKey === undefined || e.state !== JobState.running || (e.lockedUntil ?? 0) < now) continue;
      const k = `${e.json.task}\u0000${e.json.limitKey}`;
      running.set(k, (running.get(k) ?? 0) + 1);
    }
    return running;
  }

  /**
   * Per key of the ordered tasks (task\u0000key): the seq of its head, the oldest job not finished (only it may
   * run); and the keys a dead job blocks (onDead "block"). Only when a task has `orderedBy`.
   */
  orderOf(): { heads: Map<string, number>; blocked: Set<string> } {
    const heads = new Map<string, number>();
    const blocked = new Set<string>();
    for (const e of this.entries.values()) {
      const onDead = e.json.limitKey === undefined ? undefined : this.orderedTasks.get(e.json.task);
      if (onDead === undefined) continue;
      const k = `${e.json.task}\u0000${e.json.limitKey}`;
      if (e.state === JobState.ready || e.state === JobState.running) heads.set(k, Math.min(heads.get(k) ?? Infinity, e.seq));
      else if (e.state === JobState.dead && onDead === "block") blocked.add(k);
    }
    return { heads, blocked };
  }

  /** The start window of a key of a task with a per-key rate limit (made on first use). */
  keyWindow(task: string, key: string): StartWindow | null {
    const rate = this.keyRates.get(task);
    if (!rate) return null;
    const k = `${task}\u0000${key}`;
    let window = this.keyStarts.get(k);
    if (!window) this.keyStarts.set(k, (window = new StartWindow(rate)));
    return window;
  }

  /** How many more jobs of each limited task may start now (a task limited per key: its rate limit only). */
  allowances(now: number): Map<string, number> {
    const allowed = new Map<string, number>();
    if (this.limits.size === 0) return allowed;
    const running = this.runningOf(now);
    for (const [task, limit] of this.limits) {
      let n = Infinity;
      if (limit.concurrency !== null && !limit.perKey) n = limit.concurrency - (running.get(task) ?? 0);
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
      ...structuredClone(
        jobLifeFields({ runs: e.runs, errors: e.json.errors, createdAt: e.json.createdAt, running: e.state === JobState.running, progress: e.progress }),
      ),
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
