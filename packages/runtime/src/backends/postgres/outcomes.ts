import type { AttemptError, Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { CancelResult, LeaseReport, SnoozeParams } from "../../core/queue-backend.js";
import { getJob } from "./admin.js";
import { PREPARED, type PgQueue } from "./context.js";
import { jsonbText } from "./job-rows.js";
import { SQL } from "./load-sql.js";

export async function extendLeases(q: PgQueue, { workerId, jobIds, leaseMs }: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
  if (jobIds.length === 0) return { cancelled: [] };
  const rows = await q.run("extendLeases", () =>
    q.db.query<{ id: string }>(SQL.extendLeases, [jobIds, workerId, leaseMs], PREPARED.extendLeases),
  );
  return { cancelled: rows.map((r) => r.id) };
}

export async function retry(q: PgQueue, params: { workerId: string; job: Job; error: AttemptError; availableAt: Date }): Promise<void> {
  await q.run("retry", () =>
    q.db.query(SQL.retry, [params.job.id, params.workerId, jsonbText(params.error), params.availableAt.toISOString(), q.channel]),
  );
}

export async function kill(q: PgQueue, params: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
  const rows = await q.run("kill", () => q.db.query(SQL.kill, [params.job.id, params.workerId, jsonbText(params.error)]));
  // A flow step's death may have made a step after it ready (the dead-letter counters' trigger, migration 0026): wake the workers.
  if (params.job.flow && rows.length > 0) q.wakeUps.committed();
}

export async function release(q: PgQueue, { workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
  if (jobs.length === 0) return;
  await q.run("release", () =>
    q.db.query(SQL.release, [jobs.map((j) => j.id), workerId, q.channel, availableAt?.toISOString() ?? null]),
  );
}

export async function snooze(q: PgQueue, { workerId, job, availableAt, maxSnoozes }: SnoozeParams): Promise<{ snoozed: boolean }> {
  const rows = await q.run("snooze", () =>
    q.db.query(SQL.snooze, [job.id, workerId, availableAt.toISOString(), maxSnoozes, q.channel]),
  );
  return { snoozed: rows.length > 0 };
}

export async function cancel(q: PgQueue, { id }: { id: string }): Promise<CancelResult> {
  const rows = await q.run("cancel", () => q.db.query(SQL.cancel, [q.queue, id]));
  if (rows.length > 0) return { cancelled: true, state: JobState.cancelled };
  const info = await getJob(q, { id });
  return { cancelled: false, state: info?.state ?? null };
}
