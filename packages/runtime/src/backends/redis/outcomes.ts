import type { AttemptError, Job } from "../../core/job.js";
import type { JobState } from "../../core/job-state.js";
import type { CancelResult, LeaseReport, SnoozeParams } from "../../core/queue-backend.js";
import type { RedisQueue } from "./context.js";
import type { AttemptRun, JobProgress } from "../../core/job-life.js";

export async function extendLeases(q: RedisQueue, { workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
  const cancelled = (await q.script("extend", "extend leases", [workerId, leaseMs, q.workerTtlMs, ...jobIds])) as string[];
  const held = q.held.get(workerId);
  for (const id of cancelled) held?.delete(id);
  return { cancelled };
}

export async function retry(q: RedisQueue, params: { workerId: string; job: Job; error: AttemptError; availableAt: Date; run?: AttemptRun | undefined }): Promise<void> {
  const { workerId, job, error, availableAt, run } = params;
  await q.script("retry", "schedule a retry", [workerId, job.id, JSON.stringify(error), availableAt.getTime(), runJson(run)]);
  q.held.get(workerId)?.delete(job.id);
  if (availableAt.getTime() > Date.now()) await q.announce(availableAt.getTime());
}

export async function kill(q: RedisQueue, params: { workerId: string; job: Job; error: AttemptError; run?: AttemptRun | undefined }): Promise<void> {
  const { workerId, job, error, run } = params;
  await q.script("kill", "dead-letter a job", [workerId, job.id, JSON.stringify(error), runJson(run)]);
  q.held.get(workerId)?.delete(job.id);
}

export async function release(q: RedisQueue, { workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
  if (jobs.length === 0) return;
  await q.script("release", "release jobs", [workerId, availableAt?.getTime() ?? 0, ...jobs.map((j) => j.id)]);
  const held = q.held.get(workerId);
  for (const job of jobs) held?.delete(job.id);
}

export async function snooze(q: RedisQueue, { workerId, job, availableAt, maxSnoozes, run }: SnoozeParams): Promise<{ snoozed: boolean }> {
  const done = await q.script("snooze", "snooze a job", [workerId, job.id, availableAt.getTime(), maxSnoozes, runJson(run)]);
  if (done !== 1) return { snoozed: false };
  q.held.get(workerId)?.delete(job.id);
  if (availableAt.getTime() > Date.now()) await q.announce(availableAt.getTime());
  return { snoozed: true };
}

/** tools.progress of a job this worker still runs (progress.lua). */
export async function setProgress(q: RedisQueue, { workerId, job, progress }: { workerId: string; job: Job; progress: JobProgress }): Promise<void> {
  await q.script("progress", "store a job's progress", [workerId, job.id, JSON.stringify(progress)]);
}

function runJson(run: AttemptRun | undefined): string {
  return run ? JSON.stringify(run) : "";
}

/**
 * A cancelled job's hash is kept as long as a completed one's, and at least an hour: its worker (if it ran) must
 * still find it at its next heartbeat, and getJob shows it meanwhile.
 */
export async function cancel(q: RedisQueue, { id }: { id: string }): Promise<CancelResult> {
  const keep = q.cancelledRetentionMs === 0 ? 0 : Math.max(q.cancelledRetentionMs, 60 * 60 * 1000);
  const [cancelled, state] = (await q.script("cancel", "cancel a job", [id, keep, q.keys.parkedPrefix, q.keys.cancelled, q.keys.limitPrefix])) as [number, string];
  return { cancelled: cancelled === 1, state: state === "" ? null : (state as JobState) };
}
