import { errorToAttempt, type Job } from "../../core/job.js";
import { workerLostError, type ClaimParams } from "../../core/queue-backend.js";
import { PREPARED, type PgQueue } from "./context.js";
import { isRowError, translate } from "./errors.js";
import { jsonbText, rowToJob, type JobRow } from "./job-rows.js";
import { SQL } from "./load-sql.js";

export async function claim(q: PgQueue, { workerId, limit, leaseMs, pausedTasks = [] }: ClaimParams): Promise<Job[]> {
  if (limit <= 0) return [];
  if (q.limited.size > 0) return claimWithLimits(q, { workerId, limit, leaseMs, pausedTasks });
  return claimPlain(q, [q.queue, limit, workerId, leaseMs, jsonbText(workerLostError(0)), pausedTasks]);
}

/**
 * A queue with limited tasks (docs/tasks.md#limits): their jobs first, within their limits, in one transaction
 * (claim-limits-lock.sql, then claim-limited.sql); then claim.sql for the room left, leaving those tasks' jobs
 * as it leaves a paused task's.
 */
async function claimWithLimits(q: PgQueue, { workerId, limit, leaseMs, pausedTasks = [], startable = limit }: ClaimParams): Promise<Job[]> {
  const lost = jsonbText(workerLostError(0));
  const room = Math.min(limit, startable);
  const limited = room <= 0 ? [] : await q.run("claim", () =>
    q.db.transaction(async (tx) => {
      const locked = await tx.query<{ task: string }>(SQL.claimLimitsLock, [q.queue, pausedTasks], PREPARED.claimLimitsLock);
      if (locked.length === 0) return [];
      const tasks = locked.map((row) => row.task);
      return tx.query<JobRow>(SQL.claimLimited, [q.queue, room, workerId, leaseMs, lost, tasks], PREPARED.claimLimited);
    }),
  );
  const jobs = limited.map(rowToJob);
  if (jobs.length >= limit) return jobs;
  const rest = await claimPlain(q, [q.queue, limit - jobs.length, workerId, leaseMs, lost, [...pausedTasks, ...q.limited.tasks]]);
  return jobs.length === 0 ? rest : [...jobs, ...rest];
}

async function claimPlain(q: PgQueue, params: unknown[]): Promise<Job[]> {
  let rows: JobRow[];
  try {
    rows = await q.db.query<JobRow>(q.claimSql.all, params, q.claimSql.prepared);
  } catch (error) {
    if (!isRowError(error)) throw translate(error, "claim", q.schema);
    return claimOneByOne(q, params);
  }
  // Oldest first, as claim.sql orders them.
  return rows.map(rowToJob);
}

/**
 * The claim failed on a row it cannot process (a data error: a payload written by hand, a trigger of the
 * service's that refuses it). Rather than fail every claim after it, the jobs are claimed one at a time and the
 * row that fails is quarantined: moved to dead letters with the reason. docs/postgres.md#quarantine
 */
async function claimOneByOne(q: PgQueue, params: unknown[]): Promise<Job[]> {
  const [queue, limit, , , , pausedTasks] = params;
  const candidates = await q.run("claim", () => q.db.query<{ id: string }>(SQL.claimCandidates, [queue, limit, pausedTasks]));
  const jobs: Job[] = [];
  for (const { id } of candidates) {
    try {
      const [row] = await q.db.query<JobRow>(q.claimSql.one, [...params, id]);
      if (row) jobs.push(rowToJob(row));
    } catch (error) {
      // Another kind of failure (the connection) ends the round; what was claimed so far runs.
      if (!isRowError(error)) {
        if (jobs.length > 0) return jobs;
        throw translate(error, "claim", q.schema);
      }
      await quarantine(q, id, error);
    }
  }
  return jobs;
}

async function quarantine(q: PgQueue, id: string, error: unknown): Promise<void> {
  const message = `a claim could not process this job's row, so it was set aside: ${(error as Error).message}`;
  const reason = { ...errorToAttempt(new Error(message), 0, "quarantined"), class: "QuarantinedJob" };
  delete reason.stack;
  try {
    const moved = await q.db.query(SQL.quarantine, [id, jsonbText(reason)]);
    if (moved.length > 0) q.logger?.warn("quarantined a job its claim could not process", { jobId: id, queue: q.queue, error: (error as Error).message });
  } catch (cause) {
    q.logger?.warn("could not quarantine a job its claim cannot process; the claims go around it", {
      jobId: id,
      queue: q.queue,
      error: (error as Error).message,
      quarantineError: (cause as Error).message,
    });
  }
}
