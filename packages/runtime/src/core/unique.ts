import { JobState } from "./job-state.js";
import { assertStorableText } from "./storable.js";

/**
 * Unique jobs (docs/tasks.md#unique-jobs): a job with a unique key is not added while another job of the same
 * task and tenant holds that key; its enqueue returns the holder's id with `duplicate: true` instead.
 *  - with `periodMs`, the first job holds its key for that long after its enqueue, whatever becomes of it;
 *  - else it holds it while it is in one of `states` (default ready or running: waiting, scheduled or running;
 *    completed, dead or cancelled may be added, to keep holding the key once the job got there).
 * A key is held by a job, never by a duplicate.
 */
export interface JobUnique {
  /** The key given (or derived by the task's `unique.key`), without its scope. */
  key: string;
  /** How long the key is held after the first job's enqueue; null: held by state instead. */
  periodMs: number | null;
  /** The states in which the job holds its key; null with periodMs. */
  states: JobState[] | null;
}

/** What `new Job({ unique })` and a task's `unique` option take. */
export interface UniqueInit {
  key: string;
  periodMs?: number;
  states?: readonly UniqueState[];
}


/** The states a unique key can be held in: a job's, but `waiting` (a flow's step, which is never unique). */
export type UniqueState = Exclude<JobState, "waiting">;

export const DEFAULT_UNIQUE_STATES: readonly JobState[] = [JobState.ready, JobState.running];

/** A key's longest length (characters): it is stored in an index entry with its task and tenant. */
export const UNIQUE_KEY_MAX = 512;

const STATES = new Set<string>(Object.values(JobState).filter((s) => s !== JobState.waiting));

/** Checks a unique spec and gives its stored form (`what` names it in errors: `new Job({ task: "x.y" })`). */
export function normalizeUnique(init: Partial<UniqueInit>, what: string, needKey: boolean): JobUnique {
  if (needKey || init.key !== undefined) {
    if (typeof init.key !== "string" || init.key.length === 0 || init.key.length > UNIQUE_KEY_MAX) {
      throw new TypeError(`${what}: unique.key must be a non-empty string of at most ${UNIQUE_KEY_MAX} characters`);
    }
    assertStorableText(init.key, `${what}: the unique key`);
  }
  const { periodMs, states } = init;
  if (periodMs !== undefined && (!Number.isInteger(periodMs) || periodMs < 1)) {
    throw new TypeError(`${what}: unique.periodMs must be a whole number of milliseconds, at least 1`);
  }
  if (states !== undefined) {
    if (periodMs !== undefined) {
      throw new TypeError(`${what}: unique takes periodMs or states, not both (jfast docs tasks#unique-jobs)`);
    }
    if (!Array.isArray(states) || states.length === 0 || states.some((s) => !STATES.has(s))) {
      throw new TypeError(`${what}: unique.states must be a non-empty list of ${[...STATES].join(", ")}`);
    }
    // A job holds its key from its enqueue on; states only say which ends keep holding it. A job that took its
    // key only later (on completing, say) could meet another holder there, and its completion would fail.
    if (!states.includes(JobState.ready) || !states.includes(JobState.running)) {
      throw new TypeError(`${what}: unique.states must include ready and running, and may add completed, dead or cancelled (jfast docs tasks#unique-jobs)`);
    }
  }
  const unique: JobUnique = {
    key: init.key ?? "",
    periodMs: periodMs ?? null,
    states: periodMs !== undefined ? null : [...new Set(states ?? DEFAULT_UNIQUE_STATES)],
  };
  if (periodMs === undefined && states === undefined) byDefault.add(unique);
  return unique;
}

/** Specs that gave neither periodMs nor states: a task's option may still fill them in. */
const byDefault = new WeakSet<JobUnique>();

/** The unique spec a backend enforces: the job's own, with its task's period or states when it gave neither. */
export function completeUnique(unique: JobUnique, fromTask: JobUnique | null): JobUnique {
  if (!byDefault.has(unique) || fromTask === null || byDefault.has(fromTask)) return unique;
  return { key: unique.key, periodMs: fromTask.periodMs, states: fromTask.states };
}

/**
 * The key as backends store it: scoped by task and tenant (a tenant's key never holds another tenant's job; a job
 * without a tenant shares its scope with the other tenant-less jobs of its task). JSON keeps the parts apart.
 */
export function scopedUniqueKey(job: { task: string; tenantId: string | null; unique: JobUnique | null }): string {
  return JSON.stringify([job.task, job.tenantId, job.unique?.key ?? ""]);
}

/** The default key of a task's unique jobs: the payload's JSON with object keys sorted, so { a, b } = { b, a }. */
export function payloadKey(payload: unknown): string {
  return JSON.stringify(payload, (_key, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

/**
 * A batch's unique jobs split by scoped key: the first job of each key goes to the backend, every later one of the
 * same batch is its duplicate (a statement or a script then never sees one key twice).
 */
export function firstOfEachKey<J extends { id: string; task: string; tenantId: string | null; unique: JobUnique | null }>(
  jobs: readonly J[],
): { first: J[]; keys: string[]; laterOf: Map<string, string> } {
  const seen = new Map<string, string>();
  const first: J[] = [];
  const keys: string[] = [];
  const laterOf = new Map<string, string>();
  for (const job of jobs) {
    if (!job.unique) continue;
    const key = scopedUniqueKey(job);
    const holder = seen.get(key);
    if (holder !== undefined) {
      laterOf.set(job.id, holder);
      continue;
    }
    seen.set(key, job.id);
    first.push(job);
    keys.push(key);
  }
  return { first, keys, laterOf };
}

/** Whether a job in `state` still holds its key (state-held keys). */
export function holdsKey(unique: JobUnique, state: JobState): boolean {
  return unique.states !== null && unique.states.includes(state);
}

/** One loop over the batch, no allocation: a batch of plain jobs keeps the statements or script it always had. */
export function hasUnique(jobs: readonly { unique: JobUnique | null }[]): boolean {
  for (let i = 0; i < jobs.length; i++) if (jobs[i]!.unique !== null) return true;
  return false;
}
