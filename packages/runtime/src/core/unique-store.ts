import type { Job } from "./job.js";
import type { JobState } from "./job-state.js";
import { firstOfEachKey } from "./unique.js";

/**
 * Where unique keys are held for a queue whose broker cannot hold them (RabbitMQ): the service's database
 * (jfast_unique_keys, queue/unique-stores.ts), shared by every process. docs/tasks.md#unique-jobs
 */
export interface UniqueStore {
  readonly kind: "sql";
  /**
   * Takes each free key (never held, its period passed, or released) for its job, atomically per key. A key held
   * by state is taken for `pendingMs` only, until `confirm` (a process that dies before its publish frees it).
   * Answers the holder of every key after the call: the given job's id when it took it.
   */
  take(params: { keys: string[]; jobIds: string[]; holdMs: number[]; states: Array<JobState[] | null> }): Promise<Map<string, string>>;
  /** The jobs holding these keys were published: their state-held keys are held until released. */
  confirm(params: { keys: string[]; jobIds: string[] }): Promise<void>;
  /** The jobs reached `state`: their state-held keys are freed unless they hold them there. null: freed whatever. */
  release(params: { jobIds: string[]; state: JobState | null }): Promise<void>;
}

/** How long a state-held key waits for its job's publish before it is free again. */
export const UNIQUE_PENDING_MS = 60_000;

/**
 * The keys of a batch's unique jobs, taken before they are published: the jobs to publish (plain ones, and unique
 * ones that took their key), the duplicates (a later job of a key in the batch is one of its first), and what to
 * confirm after the publish (or release when it failed).
 */
export async function takeUniqueKeys(store: UniqueStore, jobs: Job[]): Promise<{ publish: Job[]; duplicates: Map<string, string>; taken: { keys: string[]; jobIds: string[] } }> {
  const { first, keys, laterOf } = firstOfEachKey(jobs);
  const holders = await store.take({
    keys,
    jobIds: first.map((job) => job.id),
    holdMs: first.map((job) => job.unique!.periodMs ?? UNIQUE_PENDING_MS),
    states: first.map((job) => job.unique!.states),
  });
  const duplicates = new Map<string, string>();
  const taken = { keys: [] as string[], jobIds: [] as string[] };
  first.forEach((job, i) => {
    const holder = holders.get(keys[i]!) ?? job.id;
    if (holder !== job.id) duplicates.set(job.id, holder);
    else if (job.unique!.states) {
      taken.keys.push(keys[i]!);
      taken.jobIds.push(job.id);
    }
  });
  for (const [later, firstId] of laterOf) duplicates.set(later, duplicates.get(firstId) ?? firstId);
  return { publish: jobs.filter((job) => !duplicates.has(job.id)), duplicates, taken };
}
