import type { Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import { holdsKey, scopedUniqueKey } from "../../core/unique.js";
import { newEntry, type MemoryStore } from "./store.js";

export function enqueue(store: MemoryStore, { jobs }: { jobs: Job[] }): EnqueueResult {
  const inserted: string[] = [];
  let duplicates: Map<string, string> | undefined;
  for (const job of jobs) {
    if (store.entries.has(job.id)) continue;
    if (job.unique) {
      const holder = takeUniqueKey(store, job);
      if (holder !== null) {
        (duplicates ??= new Map()).set(job.id, holder);
        continue;
      }
    }
    store.entries.set(job.id, newEntry(store, job, JobState.ready));
    inserted.push(job.id);
  }
  if (inserted.length > 0) store.wake();
  return duplicates ? { inserted, duplicates } : { inserted };
}

/** The id of the job holding `job`'s unique key; else null, and the key is now `job`'s. */
function takeUniqueKey(store: MemoryStore, job: Job): string | null {
  const key = scopedUniqueKey(job);
  const now = Date.now();
  const held = store.uniqueKeys.get(key);
  if (held) {
    const holder = store.entries.get(held.id);
    const holds = held.until !== null ? now < held.until : holder?.json.unique !== undefined && holdsKey(holder.json.unique, holder.state);
    if (holds) return held.id;
  }
  const periodMs = job.unique!.periodMs;
  store.uniqueKeys.set(key, { id: job.id, until: periodMs === null ? null : now + periodMs });
  return null;
}
