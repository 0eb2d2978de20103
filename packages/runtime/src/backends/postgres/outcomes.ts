import type { AttemptError, Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { AttemptRun, JobProgress } from "../../core/job-life.js";
import type { CancelResult, LeaseReport, SnoozeParams } from "../../core/queue-backend.js";
import { getJob } from "./admin.js";
import { PREPARED, type PgQueue } from "./context.js";
import { jsonbText, numberArray, textArray } from "./job-rows.js";
import { SQL } from "./load-sql.js";

export async function extendLeases(q: PgQueue, { workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
  if (jobIds.length === 0) return { cancelled: [] };
  const rows = await q.run("extendLeases", () =>
    q.db.query<{ id: string }>(SQL.extendLeases, [jobIds, workerId, leaseMs], PREPARED.extendLeases),
  );
  return { cancelled: rows.map((r) => r.id) };
}

export async function retry(q: PgQueue, params: { workerId: string; job: Job; error: AttemptError; availableAt: Date; run?: AttemptRun | undefined }): Promise<void> {
  await q.run("retry", () =>
    q.db.query(SQL.retry, [params.job.id, params.workerId, jsonbText(params.error), params.availableAt.toISOString(), q.channel, runText(params.run)]),
  );
}

export async function kill(q: PgQueue, params: { workerId: string; job: Job; error: AttemptError; run?: AttemptRun | undefined }): Promise<void> {
  const rows = await q.run("kill", () => q.db.query(SQL.kill, [params.job.id, params.workerId, jsonbText(params.error), runText(params.run)]));
  // A flow step's death may have made a step after it ready (the dead-letter counters' trigger, migration 0026): wake the workers.
  if (params.job.flow && rows.length > 0) q.wakeUps.committed();
}

export async function release(q: PgQueue, { workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
  if (jobs.length === 0) return;
  await q.run("release", () =>
    q.db.query(SQL.release, [jobs.map((j) => j.id), workerId, q.channel, availableAt?.toISOString() ?? null]),
  );
}

export async function snooze(q: PgQueue, { workerId, job, availableAt, maxSnoozes, run }: SnoozeParams): Promise<{ snoozed: boolean }> {
  const rows = await q.run("snooze", () =>
    q.db.query(SQL.snooze, [job.id, workerId, availableAt.toISOString(), maxSnoozes, q.channel, runText(run)]),
  );
  return { snoozed: rows.length > 0 };
}

/** tools.progress of a job this worker still runs (set-progress.sql). */
export async function setProgress(q: PgQueue, { workerId, job, progress }: { workerId: string; job: Job; progress: JobProgress }): Promise<void> {
  await q.run("setProgress", () => q.db.query(SQL.setProgress, [job.id, workerId, jsonbText(progress)]));
}

/**
 * An attempt's record as the outcome statements take it (jsonb text), or null. A plain record holds numbers and the
 * worker id only: its JSON needs none of jsonbText's escaping, which only lines and progress can need.
 */
export function runText(run: AttemptRun | undefined): string | null {
  if (!run) return null;
  return run.logs === undefined && run.progress === undefined ? JSON.stringify(run) : jsonbText(run);
}

/** Whether every job of a batch has a record with nothing but its timing (complete-timed.sql can build them). */
export function plainRuns(runs: ReadonlyArray<AttemptRun | undefined>, count: number): runs is AttemptRun[] {
  if (runs.length !== count) return false;
  for (const run of runs) if (!run || run.logs !== undefined || run.progress !== undefined || run.logsDropped !== undefined) return false;
  return true;
}

/** complete-timed.sql's $3, $4 and $5: each attempt's start, duration and (a first attempt's) wait. */
export function timingArrays(runs: readonly AttemptRun[]): [string, string, string] {
  return [numberArray(runs.map((r) => r.startedAt)), numberArray(runs.map((r) => r.durationMs)), numberArray(runs.map((r) => r.waitMs ?? null))];
}

/** complete-results.sql's $5 (complete-flow.sql's $7): each job's attempt record, NULL where it has none. */
export function runsArray(runs: ReadonlyArray<AttemptRun | undefined> | undefined, count: number): string | null {
  if (!runs) return null;
  const texts: Array<string | null> = [];
  for (let i = 0; i < count; i++) texts.push(runText(runs[i]));
  return textArray(texts);
}

export async function cancel(q: PgQueue, { id }: { id: string }): Promise<CancelResult> {
  const rows = await q.run("cancel", () => q.db.query(SQL.cancel, [q.queue, id]));
  if (rows.length > 0) return { cancelled: true, state: JobState.cancelled };
  const info = await getJob(q, { id });
  return { cancelled: false, state: info?.state ?? null };
}
