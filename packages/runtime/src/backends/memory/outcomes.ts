import type { AttemptError, Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { CancelResult, CompleteParams, LeaseReport, SnoozeParams } from "../../core/queue-backend.js";
import { addSpawned, stepCompleted } from "./flows.js";
import type { Entry, MemoryStore } from "./store.js";
import { withRun, type AttemptRun, type JobProgress } from "../../core/job-life.js";

export function extendLeases(store: MemoryStore, { workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): LeaseReport {
  const until = Date.now() + leaseMs;
  const cancelled: string[] = [];
  for (const id of jobIds) {
    const entry = store.entries.get(id);
    if (entry && entry.state === JobState.running && entry.lockedBy === workerId) entry.lockedUntil = until;
    else if (entry && entry.state === JobState.cancelled && entry.lockedBy === workerId) cancelled.push(id);
  }
  return { cancelled };
}

export function complete(store: MemoryStore, { workerId, job, result, spawn, run }: CompleteParams): void {
  const entry = store.owned(job.id, workerId);
  if (!entry) return;
  if (result) entry.result = result;
  addRun(entry, run);
  entry.state = JobState.completed;
  entry.finishedAt = Date.now();
  entry.lockedBy = null;
  entry.lockedUntil = null;
  if (entry.flow) {
    // Steps it spawned are written before it is counted, in the same synchronous step (flows.ts).
    if (spawn) addSpawned(store, entry, spawn);
    stepCompleted(store, entry);
  }
  if (store.limits.has(entry.json.task)) store.wake();
}

export function retry(store: MemoryStore, params: { workerId: string; job: Job; error: AttemptError; availableAt: Date; run?: AttemptRun | undefined }): void {
  const entry = store.owned(params.job.id, params.workerId);
  if (!entry) return;
  addRun(entry, params.run);
  entry.json.errors.push(params.error);
  entry.json.availableAt = params.availableAt.toISOString();
  entry.state = JobState.ready;
  entry.lockedBy = null;
  entry.lockedUntil = null;
  store.wake();
}

export function kill(store: MemoryStore, params: { workerId: string; job: Job; error: AttemptError; run?: AttemptRun | undefined }): void {
  const entry = store.owned(params.job.id, params.workerId);
  if (!entry) return;
  addRun(entry, params.run);
  entry.json.errors.push(params.error);
  store.markDead(entry, Date.now());
  if (store.limits.has(entry.json.task)) store.wake();
}

export function release(store: MemoryStore, { workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): void {
  for (const job of jobs) {
    const entry = store.owned(job.id, workerId);
    if (!entry) continue;
    entry.state = JobState.ready;
    entry.json.attempts = Math.max(0, entry.json.attempts - 1);
    entry.json.availableAt = (availableAt ?? new Date()).toISOString();
    entry.lockedBy = null;
    entry.lockedUntil = null;
  }
  store.wake();
}

export function snooze(store: MemoryStore, { workerId, job, availableAt, maxSnoozes, run }: SnoozeParams): { snoozed: boolean } {
  const entry = store.owned(job.id, workerId);
  if (!entry || entry.snoozes >= maxSnoozes) return { snoozed: false };
  addRun(entry, run);
  entry.snoozes += 1;
  entry.state = JobState.ready;
  entry.json.attempts = Math.max(0, entry.json.attempts - 1);
  entry.json.availableAt = availableAt.toISOString();
  entry.lockedBy = null;
  entry.lockedUntil = null;
  store.wake();
  return { snoozed: true };
}

/** `tools.progress` of a job this worker still runs. */
export function setProgress(store: MemoryStore, { workerId, job, progress }: { workerId: string; job: Job; progress: JobProgress }): void {
  const entry = store.owned(job.id, workerId);
  if (entry) entry.progress = structuredClone(progress);
}

/** The attempt's record joins the job; the progress it wrote while running is now in the record. */
function addRun(entry: Entry, run: AttemptRun | undefined): void {
  if (!run) return;
  // The worker made the record for this write and keeps no hold on it (its lines are closed at the attempt's end).
  entry.runs = withRun(entry.runs, run);
  delete entry.progress;
}

/** A running job keeps `lockedBy` so that its worker's next heartbeat learns of the cancellation. */
export function cancel(store: MemoryStore, { id }: { id: string }): CancelResult {
  const entry = store.entries.get(id);
  if (!entry) return { cancelled: false, state: null };
  if (entry.state !== JobState.ready && entry.state !== JobState.running && entry.state !== JobState.waiting) return { cancelled: false, state: entry.state };
  if (entry.state !== JobState.running) entry.lockedBy = null;
  entry.state = JobState.cancelled;
  entry.finishedAt = Date.now();
  entry.lockedUntil = null;
  return { cancelled: true, state: JobState.cancelled };
}
