import { debouncedStart, scopedDebounceKey } from "../../core/debounce.js";
import type { Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { MemoryStore } from "./store.js";

/** Each store's debounce keys (scoped) → the job that was last made for the key. */
const keysOf = new WeakMap<MemoryStore, Map<string, string>>();

/**
 * A batch with a debounced job (docs/flow-control.md#debounce): a job whose key's last job still waits (ready, never
 * started) is folded into it, which takes its payload and its later start; any other is enqueued and becomes its
 * key's job. One synchronous step, as every memory operation.
 */
export function enqueueDebounced(store: MemoryStore, jobs: Job[], enqueue: (store: MemoryStore, params: { jobs: Job[] }) => EnqueueResult): EnqueueResult {
  let keys = keysOf.get(store);
  if (!keys) keysOf.set(store, (keys = new Map()));
  const inserted: string[] = [];
  const duplicates = new Map<string, string>();
  const now = Date.now();
  for (const job of jobs) {
    if (job.debounce === null) {
      const result = enqueue(store, { jobs: [job] });
      inserted.push(...result.inserted);
      for (const [id, holder] of result.duplicates ?? []) duplicates.set(id, holder);
      continue;
    }
    const key = scopedDebounceKey(job);
    const heldBy = keys.get(key);
    const holder = heldBy === undefined ? undefined : store.entries.get(heldBy);
    if (holder && holder.state === JobState.ready && holder.json.attempts === 0) {
      holder.json.payload = structuredClone(job.payload);
      holder.json.availableAt = new Date(debouncedStart(job.debounce, Date.parse(holder.json.createdAt), now)).toISOString();
      if (holder.json.id !== job.id) duplicates.set(job.id, holder.json.id);
      continue;
    }
    const result = enqueue(store, { jobs: [job] });
    inserted.push(...result.inserted);
    if (result.inserted.includes(job.id)) keys.set(key, job.id);
  }
  return duplicates.size > 0 ? { inserted, duplicates } : { inserted };
}
