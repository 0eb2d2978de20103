import { Job, type AttemptError, type JobJSON } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import {
  BackendKind,
  workerLostError,
  type CancelResult,
  type ClaimParams,
  type DeadJob,
  type Depths,
  type EnqueueResult,
  type JobActionResult,
  type JobInfo,
  type JobListing,
  type LeaseReport,
  type ListJobsParams,
  ListOrder,
  type QueueBackend,
  type RetryDeadParams,
  type SnoozeParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import { holdsKey, scopedUniqueKey } from "../../core/unique.js";
import { StartWindow, type LimitMap, type LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import { NotSupportedError } from "../../errors/jfast-error.js";
import { rewriteParts, type StoredParts, type StoredRewriteResult } from "../../core/stored-rewrite.js";
import { decodeCursor, encodeCursor, listById, matchesListing } from "../../core/job-listing.js";

interface Entry {
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
}

/**
 * In-process queue with the same protocol as the others: leases, attempts counted at claim, worker-lost
 * accounting, dead letters. Nothing survives the process; for tests and single-process use.
 */
export class MemoryBackend implements QueueBackend {
  readonly kind = BackendKind.memory;
  private readonly entries = new Map<string, Entry>();
  private readonly waiters = new Set<() => void>();
  /** Unique keys (scoped) → the job holding it, and until when for a key held for a period. Checked lazily. */
  private readonly uniqueKeys = new Map<string, { id: string; until: number | null }>();
  private seq = 0;
  private closed = false;
  /** Task limits (docs/tasks.md#limits): the running count is read from the entries, the starts kept here. */
  private limits: LimitMap = new Map();
  private readonly starts = new Map<string, StartWindow>();

  async setup(): Promise<void> {}

  async setLimits({ limits }: { limits: LimitMap }): Promise<void> {
    this.limits = limits;
    this.starts.clear();
    for (const [task, limit] of limits) if (limit.rateLimit) this.starts.set(task, new StartWindow(limit.rateLimit));
  }

  async limitUsage({ task }: { task: string }): Promise<LimitUsage> {
    const now = Date.now();
    const window = this.starts.get(task);
    const rate = this.limits.get(task)?.rateLimit;
    return { running: this.runningOf(now).get(task) ?? 0, startedInWindow: window && rate ? rate.max - window.room(now) : 0 };
  }

  /** Jobs running under a live lease, per task. */
  private runningOf(now: number): Map<string, number> {
    const running = new Map<string, number>();
    for (const e of this.entries.values()) {
      if (e.state === JobState.running && (e.lockedUntil ?? 0) >= now) running.set(e.json.task, (running.get(e.json.task) ?? 0) + 1);
    }
    return running;
  }

  /** How many more jobs of each limited task may start now. */
  private allowances(now: number): Map<string, number> {
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

  /** The pruner's lease: one pruner at a time, as the other backends hold it across processes. */
  private pruner: { owner: string; until: number } | null = null;

  async prune({ state, select, limit }: PruneParams): Promise<number> {
    const at = (e: Entry) => (state === RetainedState.dead ? (e.diedAt ?? 0) : (e.finishedAt ?? 0));
    // Oldest first, ties by enqueue order, as the other backends read their indexes.
    const finished = [...this.entries.entries()].filter(([, e]) => e.state === state).sort(([, a], [, b]) => at(a) - at(b) || a.seq - b.seq);
    const doomed =
      "before" in select
        ? finished.filter(([, e]) => at(e) < select.before.getTime())
        : finished.slice(0, Math.max(0, finished.length - select.keepNewest));
    const batch = doomed.slice(0, limit);
    for (const [id] of batch) this.entries.delete(id);
    return batch.length;
  }

  async claimPruner({ owner, ttlMs }: { owner: string; ttlMs: number }): Promise<boolean> {
    const now = Date.now();
    if (this.pruner && this.pruner.owner !== owner && this.pruner.until > now) return false;
    this.pruner = { owner, until: now + ttlMs };
    return true;
  }

  async releasePruner({ owner }: { owner: string }): Promise<void> {
    if (this.pruner?.owner === owner) this.pruner = null;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
  }

  async enqueue({ jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
    const inserted: string[] = [];
    let duplicates: Map<string, string> | undefined;
    for (const job of jobs) {
      if (this.entries.has(job.id)) continue;
      if (job.unique) {
        const holder = this.takeUniqueKey(job);
        if (holder !== null) {
          (duplicates ??= new Map()).set(job.id, holder);
          continue;
        }
      }
      this.entries.set(job.id, {
        // Through JSON, as every other backend stores it: a Date becomes its string, -0 becomes 0, a property
        // that is undefined or a function is left out (structuredClone would keep them, or throw on a function).
        json: JSON.parse(JSON.stringify(job.toJSON())) as JobJSON,
        state: JobState.ready,
        lockedBy: null,
        lockedUntil: null,
        diedAt: null,
        seq: this.seq++,
        snoozes: 0,
        finishedAt: null,
      });
      inserted.push(job.id);
    }
    if (inserted.length > 0) this.wake();
    return duplicates ? { inserted, duplicates } : { inserted };
  }

  /** The id of the job holding `job`'s unique key; else null, and the key is now `job`'s. */
  private takeUniqueKey(job: Job): string | null {
    const key = scopedUniqueKey(job);
    const now = Date.now();
    const held = this.uniqueKeys.get(key);
    if (held) {
      const holder = this.entries.get(held.id);
      const holds = held.until !== null ? now < held.until : holder?.json.unique !== undefined && holdsKey(holder.json.unique, holder.state);
      if (holds) return held.id;
    }
    const periodMs = job.unique!.periodMs;
    this.uniqueKeys.set(key, { id: job.id, until: periodMs === null ? null : now + periodMs });
    return null;
  }

  async claim({ workerId, limit, leaseMs, pausedTasks = [], startable = limit }: ClaimParams): Promise<Job[]> {
    const now = Date.now();
    const paused = new Set(pausedTasks);
    const candidates = [...this.entries.values()]
      .filter(
        (e) =>
          !paused.has(e.json.task) &&
          ((e.state === JobState.ready && Date.parse(e.json.availableAt) <= now) ||
            (e.state === JobState.running && (e.lockedUntil ?? 0) < now)),
      )
      // Priority first (0 before 9), then availability, then enqueue order: the order every backend claims in.
      .sort(
        (a, b) =>
          a.json.priority - b.json.priority || Date.parse(a.json.availableAt) - Date.parse(b.json.availableAt) || a.seq - b.seq,
      );
    const claimed: Job[] = [];
    const allowed = this.allowances(now);
    let limitedRoom = startable;
    for (const entry of candidates) {
      if (claimed.length >= limit) break;
      // A job of a task at its limit stays waiting; the next candidates (other tasks) are still claimed.
      const room = allowed.get(entry.json.task);
      if (room !== undefined) {
        if (room <= 0 || limitedRoom <= 0) continue;
        limitedRoom--;
        allowed.set(entry.json.task, room - 1);
        this.starts.get(entry.json.task)?.add(now);
      }
      if (entry.state === JobState.running) {
        // Its worker vanished mid-attempt: that attempt is spent.
        entry.json.errors.push(workerLostError(entry.json.attempts));
        if (entry.json.attempts >= (entry.json.maxAttempts ?? 1)) {
          this.markDead(entry, now);
          continue;
        }
      }
      entry.state = JobState.running;
      entry.lockedBy = workerId;
      entry.lockedUntil = now + leaseMs;
      entry.json.attempts += 1;
      claimed.push(Job.fromJSON(structuredClone(entry.json)));
    }
    return claimed;
  }

  async extendLeases({ workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
    const until = Date.now() + leaseMs;
    const cancelled: string[] = [];
    for (const id of jobIds) {
      const entry = this.entries.get(id);
      if (entry && entry.state === JobState.running && entry.lockedBy === workerId) entry.lockedUntil = until;
      else if (entry && entry.state === JobState.cancelled && entry.lockedBy === workerId) cancelled.push(id);
    }
    return { cancelled };
  }

  async complete({ workerId, job }: { workerId: string; job: Job }): Promise<void> {
    const entry = this.owned(job.id, workerId);
    if (!entry) return;
    entry.state = JobState.completed;
    entry.finishedAt = Date.now();
    entry.lockedBy = null;
    entry.lockedUntil = null;
    if (this.limits.has(entry.json.task)) this.wake();
  }

  async retry(params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
    const entry = this.owned(params.job.id, params.workerId);
    if (!entry) return;
    entry.json.errors.push(params.error);
    entry.json.availableAt = params.availableAt.toISOString();
    entry.state = JobState.ready;
    entry.lockedBy = null;
    entry.lockedUntil = null;
    this.wake();
  }

  async kill(params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
    const entry = this.owned(params.job.id, params.workerId);
    if (!entry) return;
    entry.json.errors.push(params.error);
    this.markDead(entry, Date.now());
    if (this.limits.has(entry.json.task)) this.wake();
  }

  async release({ workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
    for (const job of jobs) {
      const entry = this.owned(job.id, workerId);
      if (!entry) continue;
      entry.state = JobState.ready;
      entry.json.attempts = Math.max(0, entry.json.attempts - 1);
      entry.json.availableAt = (availableAt ?? new Date()).toISOString();
      entry.lockedBy = null;
      entry.lockedUntil = null;
    }
    this.wake();
  }

  async snooze({ workerId, job, availableAt, maxSnoozes }: SnoozeParams): Promise<{ snoozed: boolean }> {
    const entry = this.owned(job.id, workerId);
    if (!entry || entry.snoozes >= maxSnoozes) return { snoozed: false };
    entry.snoozes += 1;
    entry.state = JobState.ready;
    entry.json.attempts = Math.max(0, entry.json.attempts - 1);
    entry.json.availableAt = availableAt.toISOString();
    entry.lockedBy = null;
    entry.lockedUntil = null;
    this.wake();
    return { snoozed: true };
  }

  /** A running job keeps `lockedBy` so that its worker's next heartbeat learns of the cancellation. */
  async cancel({ id }: { id: string }): Promise<CancelResult> {
    const entry = this.entries.get(id);
    if (!entry) return { cancelled: false, state: null };
    if (entry.state !== JobState.ready && entry.state !== JobState.running) return { cancelled: false, state: entry.state };
    if (entry.state === JobState.ready) entry.lockedBy = null;
    entry.state = JobState.cancelled;
    entry.finishedAt = Date.now();
    entry.lockedUntil = null;
    return { cancelled: true, state: JobState.cancelled };
  }

  /** Every entry of the state, sorted by its time then enqueue order; the whole store is in this process. */
  async listJobs(params: ListJobsParams): Promise<JobListing> {
    if (params.id !== undefined) return listById((p) => this.getJob(p), { ...params, id: params.id });
    const now = Date.now();
    const after = decodeCursor(params, 2) as [number, number] | null;
    const sign = params.order === ListOrder.oldest ? 1 : -1;
    const keyOf = (e: Entry): [number, number] => [this.listTime(e), e.seq];
    const rows = [...this.entries.values()]
      .filter((e) => matchesListing(this.info(e), params, now))
      .map((e) => ({ e, key: keyOf(e) }))
      .filter(({ key }) => after === null || sign * (key[0] - after[0] || key[1] - after[1]) > 0)
      .sort((a, b) => sign * (a.key[0] - b.key[0] || a.key[1] - b.key[1]));
    const page = rows.slice(0, params.limit);
    const last = page.at(-1);
    return {
      rows: page.map(({ e }) => this.info(e)),
      next: rows.length > params.limit && last ? encodeCursor(params, last.key) : null,
      exact: true,
    };
  }

  async runNow({ id }: { id: string }): Promise<JobActionResult> {
    const entry = this.entries.get(id);
    if (!entry) return { done: false, state: null };
    if (entry.state !== JobState.ready) return { done: false, state: entry.state };
    entry.json.availableAt = new Date().toISOString();
    this.wake();
    return { done: true, state: JobState.ready };
  }

  async deleteJob({ id }: { id: string }): Promise<JobActionResult> {
    const entry = this.entries.get(id);
    if (!entry) return { done: false, state: null };
    if (entry.state !== JobState.ready) return { done: false, state: entry.state };
    this.entries.delete(id);
    return { done: true, state: null };
  }

  waitForWork({ signal, timeoutMs, pausedTasks = [] }: { signal: AbortSignal; timeoutMs: number; pausedTasks?: readonly string[] }): Promise<void> {
    if (signal.aborted || this.closed) return Promise.resolve();
    const nextDue = this.nextDueIn(new Set(pausedTasks));
    const wait = Math.max(0, Math.min(timeoutMs, nextDue ?? timeoutMs));
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      signal.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
  }

  async listDead({ limit, offset = 0 }: { limit: number; offset?: number }): Promise<DeadJob[]> {
    return [...this.entries.values()]
      .filter((e) => e.state === JobState.dead)
      .sort((a, b) => (b.diedAt ?? 0) - (a.diedAt ?? 0) || b.seq - a.seq)
      .slice(offset, offset + limit)
      .map((e) => ({
        job: structuredClone(e.json),
        diedAt: new Date(e.diedAt ?? 0).toISOString(),
        lastError: e.json.errors.at(-1) ?? null,
      }));
  }

  async retryDead(params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
    const { found, missing } = this.selectDead(params);
    for (const entry of found) {
      entry.state = JobState.ready;
      entry.json.attempts = 0;
      entry.json.availableAt = new Date().toISOString();
      entry.diedAt = null;
    }
    if (found.length > 0) this.wake();
    return { retried: found.map((e) => e.json.id), missing };
  }

  async discardDead(params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
    const { found, missing } = this.selectDead(params);
    for (const entry of found) this.entries.delete(entry.json.id);
    return { discarded: found.map((e) => e.json.id), missing };
  }

  async depths(): Promise<Depths> {
    const now = Date.now();
    const depths: Depths = { ready: 0, scheduled: 0, running: 0, dead: 0 };
    for (const e of this.entries.values()) {
      if (e.state === JobState.ready) {
        if (Date.parse(e.json.availableAt) <= now) depths.ready++;
        else depths.scheduled++;
      } else if (e.state === JobState.running) depths.running++;
      else if (e.state === JobState.dead) depths.dead++;
    }
    return depths;
  }

  async depthsByTask(params: { tenantId?: string | undefined } = {}): Promise<TaskDepths> {
    const now = Date.now();
    const tasks: Record<string, Depths> = {};
    for (const e of this.entries.values()) {
      if (e.state === JobState.completed || e.state === JobState.cancelled) continue;
      if (params.tenantId !== undefined && e.json.tenantId !== params.tenantId) continue;
      const depths = (tasks[e.json.task] ??= { ready: 0, scheduled: 0, running: 0, dead: 0 });
      if (e.state === JobState.ready) {
        if (Date.parse(e.json.availableAt) <= now) depths.ready++;
        else depths.scheduled++;
      } else if (e.state === JobState.running) depths.running++;
      else depths.dead++;
    }
    return { tasks, exact: true };
  }

  /** `jfast keys rotate` (core/stored-rewrite.ts): in place, between two awaits, so no claim can interleave. */
  async rewriteStored(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
    const result: StoredRewriteResult = { waiting: 0, dead: 0, skipped: [] };
    for (const entry of this.entries.values()) {
      if (entry.state !== JobState.ready && entry.state !== JobState.dead) continue;
      const next = rewriteParts(entry.json.id, { payload: entry.json.payload, errors: entry.json.errors }, params.rewrite, result.skipped);
      if (!next) continue;
      entry.json = { ...entry.json, payload: next.payload, errors: next.errors };
      if (entry.state === JobState.dead) result.dead++;
      else result.waiting! += 1;
    }
    return result;
  }

  async getJob({ id }: { id: string }): Promise<JobInfo | null> {
    const e = this.entries.get(id);
    return e ? this.info(e) : null;
  }

  private listTime(e: Entry): number {
    if (e.state === JobState.dead) return e.diedAt ?? 0;
    if (e.state === JobState.completed || e.state === JobState.cancelled) return e.finishedAt ?? 0;
    return Date.parse(e.json.availableAt);
  }

  private info(e: Entry): JobInfo {
    return {
      job: structuredClone(e.json),
      state: e.state,
      lockedBy: e.lockedBy,
      lockedUntil: e.lockedUntil === null ? null : new Date(e.lockedUntil).toISOString(),
      diedAt: e.diedAt === null ? null : new Date(e.diedAt).toISOString(),
    };
  }

  /** Kept by the service (core/pause.ts): a memory queue lives in one process. */
  pauseStore(): null {
    return null;
  }

  /** No payload index: the admin API reads a bounded number of dead letters instead (docs/admin-api.md#job-search). */
  async searchDead(): Promise<{ rows: DeadJob[]; next: string | null }> {
    throw new NotSupportedError("the memory queue keeps no index of dead letters' payloads", {
      hint: "search by payload reads the newest dead letters instead; the PostgreSQL queue answers it through an index",
      docs: "jfast docs admin-api#job-search",
    });
  }

  /** The service keeps throughput counts in its database, or in memory. */
  throughputStore(): null {
    return null;
  }

  private selectDead(params: RetryDeadParams): { found: Entry[]; missing: string[] } {
    if ("all" in params) return { found: [...this.entries.values()].filter((e) => e.state === JobState.dead), missing: [] };
    const found: Entry[] = [];
    const missing: string[] = [];
    for (const id of params.ids) {
      const entry = this.entries.get(id);
      if (entry && entry.state === JobState.dead) found.push(entry);
      else missing.push(id);
    }
    return { found, missing };
  }

  private owned(id: string, workerId: string): Entry | undefined {
    const entry = this.entries.get(id);
    // A worker whose lease was taken over must not overwrite the new owner's outcome.
    return entry && entry.state === JobState.running && entry.lockedBy === workerId ? entry : undefined;
  }

  private markDead(entry: Entry, now: number): void {
    entry.state = JobState.dead;
    entry.diedAt = now;
    entry.lockedBy = null;
    entry.lockedUntil = null;
  }

  private nextDueIn(paused: ReadonlySet<string>): number | null {
    const now = Date.now();
    let next: number | null = null;
    // A task at its limit wakes its waiters when a slot frees (complete, retry, kill, release) or its window
    // lets one more start; its due jobs must not wake them before.
    const allowed = this.allowances(now);
    for (const e of this.entries.values()) {
      if (paused.has(e.json.task)) continue;
      let due: number | null = null;
      if (e.state === JobState.ready && allowed.get(e.json.task) === 0) {
        const at = this.starts.get(e.json.task)?.nextAt(now) ?? null;
        due = at === null ? null : Math.max(at, Date.parse(e.json.availableAt));
      } else if (e.state === JobState.ready) due = Date.parse(e.json.availableAt);
      else if (e.state === JobState.running && e.lockedUntil !== null) due = e.lockedUntil + 1;
      if (due !== null && (next === null || due < next)) next = due;
    }
    return next === null ? null : Math.max(0, next - now);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

export function createMemoryBackend(): MemoryBackend {
  return new MemoryBackend();
}
