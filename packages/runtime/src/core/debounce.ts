import { assertStorableText } from "./storable.js";

/**
 * Debounce (docs/flow-control.md#debounce): a task's jobs with one key, enqueued while one of them is still waiting,
 * are folded into that one job: its payload becomes the latest one, and its start moves to `delayMs` after the latest
 * enqueue, but never past `maxWaitMs` after the first. One job runs, with the last payload. Once it has started, the
 * next enqueue of the key makes a new job.
 */
export interface TaskDebounce<P = unknown> {
  /** The key of a job, from its payload (and the job: its `tenantId`, `task`). Scoped by task and tenant. */
  key(payload: P, job: { task: string; tenantId: string | null }): string;
  /** How long after the latest enqueue of its key the job starts. */
  delayMs: number;
  /** At most this long after the first enqueue of its key (the one that made the job), whatever comes after. */
  maxWaitMs?: number;
}

/** What a job carries from its task's option (the key computed at enqueue); stored with it until it is written. */
export interface JobDebounce {
  key: string;
  delayMs: number;
  maxWaitMs: number | null;
}

export const DEBOUNCE_KEY_MAX = 512;

/** Checks a task's option where it is declared (`what` names the task in errors). */
export function checkDebounce(option: TaskDebounce<never>, what: string): void {
  if (typeof option !== "object" || option === null || typeof option.key !== "function") {
    throw new TypeError(`${what}: debounce takes { key: (payload) => string, delayMs, maxWaitMs? } (jfast docs flow-control#debounce)`);
  }
  if (!Number.isInteger(option.delayMs) || option.delayMs < 0) {
    throw new TypeError(`${what}: debounce.delayMs must be a whole number of milliseconds, 0 or more`);
  }
  if (option.maxWaitMs !== undefined && (!Number.isInteger(option.maxWaitMs) || option.maxWaitMs < option.delayMs)) {
    throw new TypeError(`${what}: debounce.maxWaitMs must be a whole number of milliseconds, at least delayMs`);
  }
}

/** The debounce of one job of a task with the option: its key computed now, checked as unique keys are. */
export function jobDebounce<P>(option: TaskDebounce<P>, payload: P, job: { task: string; tenantId: string | null }): JobDebounce {
  const key = option.key(payload, job);
  if (typeof key !== "string" || key.length === 0 || key.length > DEBOUNCE_KEY_MAX) {
    throw new TypeError(`task "${job.task}": debounce.key must return a non-empty string of at most ${DEBOUNCE_KEY_MAX} characters (jfast docs flow-control#debounce)`);
  }
  assertStorableText(key, `task "${job.task}": the debounce key`);
  return { key, delayMs: option.delayMs, maxWaitMs: option.maxWaitMs ?? null };
}

/** The key as backends store it: scoped by task and tenant, kept apart from unique keys (docs/tasks.md#unique-jobs). */
export function scopedDebounceKey(job: { task: string; tenantId: string | null; debounce: JobDebounce | null }): string {
  return JSON.stringify(["debounce", job.task, job.tenantId, job.debounce?.key ?? ""]);
}

/** One loop, no allocation: a batch of plain jobs keeps the statements or script it always had. */
export function hasDebounce(jobs: readonly { debounce: JobDebounce | null }[]): boolean {
  for (let i = 0; i < jobs.length; i++) if (jobs[i]!.debounce !== null) return true;
  return false;
}

/** When a job folded into a waiting one starts: `delayMs` after now, never past the first enqueue + `maxWaitMs`. */
export function debouncedStart(debounce: JobDebounce, firstMs: number, nowMs: number): number {
  const next = nowMs + debounce.delayMs;
  return debounce.maxWaitMs === null ? next : Math.min(next, firstMs + debounce.maxWaitMs);
}
