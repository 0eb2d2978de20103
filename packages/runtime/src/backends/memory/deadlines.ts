import { expiredError } from "../../core/deadline.js";
import type { AttemptError, Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { Entry, MemoryStore } from "./store.js";

/** The claim reached the job after its deadline (docs/flow-control.md#deadlines): expired, its attempt given back. */
export function expire(store: MemoryStore, { workerId, job, error }: { workerId: string; job: Job; error: AttemptError }): void {
  const entry = store.owned(job.id, workerId);
  if (!entry) return;
  entry.json.attempts = Math.max(0, entry.json.attempts - 1);
  markExpired(store, entry, { ...error, attempt: entry.json.attempts });
}

/** The sweep: ready jobs that never ran (no attempt spent) and whose deadline passed. */
export function expireDue(store: MemoryStore, { limit }: { limit: number }): number {
  const now = Date.now();
  let expired = 0;
  for (const entry of store.entries.values()) {
    if (expired >= limit) break;
    const at = entry.json.expiresAt;
    if (at === undefined || entry.state !== JobState.ready || entry.json.attempts > 0 || Date.parse(at) > now) continue;
    markExpired(store, entry, expiredError(at, 0, "sweep"));
    expired++;
  }
  return expired;
}

function markExpired(store: MemoryStore, entry: Entry, error: AttemptError): void {
  entry.json.errors.push(error);
  entry.state = JobState.expired;
  entry.finishedAt = Date.now();
  entry.lockedBy = null;
  entry.lockedUntil = null;
  if (store.limits.has(entry.json.task)) store.wake();
}
