import { errorToAttempt, type Job } from "../../core/job.js";
import { workerLostError, type ClaimParams } from "../../core/queue-backend.js";
import { PREPARED, type PgQueue } from "./context.js";
import { isRowError, translate } from "./errors.js";
import { jsonbText, rowToJob, type JobRow } from "./job-rows.js";
import { SQL } from "./load-sql.js";
import type { SqlExecutor } from "../../core/sql-port.js";

export async function claim(q: PgQueue, { workerId, limit, leaseMs, pausedTasks = [], startable = limit }: ClaimParams): Promise<Job[]> {
  if (limit <= 0) return [];
  // `startable` goes along: a task whose starts the claim counts (docs/tasks.md#limits) has its jobs claimed only for
  // the worker's free slots, never into its buffer.
  if (q.limited.size > 0) return claimWithLimits(q, { workerId, limit, leaseMs, pausedTasks, startable });
  return claimPlain(q, [q.queue, limit, workerId, leaseMs, jsonbText(workerLostError(0)), pausedTasks]);
}

/**
 * A queue with limited tasks (docs/tasks.md#limits): the jobs of tasks whose starts count, within their limits and
 * the worker's free slots (claimCounted); the jobs of fair tasks that count nothing, up to the whole `limit`
 * (claimFairAlone); then claim.sql for the room left, leaving limited tasks' jobs as it leaves a paused task's.
 * Every other claim takes claim.sql's jobs before the fair tasks' ones, so a fair backlog never holds the queue's
 * other jobs back.
 */
async function claimWithLimits(q: PgQueue, { workerId, limit, leaseMs, pausedTasks = [], startable = limit }: ClaimParams): Promise<Job[]> {
  const lost = jsonbText(workerLostError(0));
  const uncounted = q.limited.fairUncounted;
  const room = Math.min(limit, startable);
  const counted = room <= 0 || uncounted.length === q.limited.size ? [] : await claimCounted(q, { workerId, room, leaseMs, lost, skip: [...pausedTasks, ...uncounted] });
  let jobs = counted.map(rowToJob);
  const fairTasks = uncounted.length === 0 ? uncounted : uncounted.filter((task) => !pausedTasks.includes(task));
  const skipLimited = [...pausedTasks, ...q.limited.tasks];
  const plain = async () => {
    if (jobs.length >= limit || (fairTasks.length > 0 && othersQuiet(q))) return;
    const more = await claimPlain(q, [q.queue, limit - jobs.length, workerId, leaseMs, lost, skipLimited]);
    jobs = [...jobs, ...more];
    const seen = q.wakeUpsSeen();
    // Only while listening: an enqueue's wake-up is what ends the quiet at once. A worker that has not waited yet
    // (it started on a backlog) starts listening here.
    if (seen === null && fairTasks.length > 0) q.listen();
    q.othersQuiet = fairTasks.length > 0 && more.length === 0 && seen !== null ? { until: Date.now() + OTHERS_RECHECK_MS, seen } : null;
  };
  const plainFirst = fairTasks.length > 0 && q.fairClaims++ % 2 === 1;
  if (plainFirst) await plain();
  if (fairTasks.length > 0 && jobs.length < limit) jobs = [...jobs, ...(await claimFairAlone(q, [q.queue, limit - jobs.length, workerId, leaseMs, lost, fairTasks]))];
  if (!plainFirst) await plain();
  return jobs;
}

/**
 * How long claims beside fair tasks skip looking for the queue's other jobs after a look found none, unless an
 * enqueue's wake-up comes first. claim.sql skips a limited task's jobs one row at a time, so beside a fair backlog
 * each look that finds nothing reads the whole backlog: with 20 000 fair jobs waiting, 20 000 rows per claim. A job
 * due later without an enqueue (a retry, a delayed job) waits at most this much longer; an enqueue, not at all.
 */
const OTHERS_RECHECK_MS = 50;

/** Claims beside fair tasks need not look for the queue's other jobs now (see OTHERS_RECHECK_MS). */
function othersQuiet(q: PgQueue): boolean {
  const quiet = q.othersQuiet;
  if (!quiet) return false;
  if (Date.now() < quiet.until && q.wakeUpsSeen() === quiet.seen) return true;
  q.othersQuiet = null;
  return false;
}

/**
 * The tasks whose starts the claim counts, in one transaction: claim-limits-lock.sql, then claim-limited.sql for
 * the tasks limited as a whole, claim-fair.sql for fair tasks with a task-wide limit and claim-keyed.sql for the
 * other per-key ones, each for the room the statements before left.
 */
async function claimCounted(q: PgQueue, { workerId, room, leaseMs, lost, skip }: { workerId: string; room: number; leaseMs: number; lost: string; skip: string[] }): Promise<JobRow[]> {
  return q.run("claim", () =>
    q.db.transaction(async (tx) => {
      const locked = await tx.query<{ task: string }>(SQL.claimLimitsLock, [q.queue, skip], PREPARED.claimLimitsLock);
      if (locked.length === 0) return [];
      const keyed = q.limited.keyed;
      const tasks = keyed.length === 0 ? locked.map((row) => row.task) : locked.flatMap((row) => (keyed.includes(row.task) ? [] : [row.task]));
      const rows = tasks.length === 0 ? [] : await tx.query<JobRow>(SQL.claimLimited, [q.queue, room, workerId, leaseMs, lost, tasks], PREPARED.claimLimited);
      if (keyed.length === 0 || rows.length >= room) return rows;
      // Tasks limited per key (docs/flow-control.md#per-key-concurrency): their own statement, for the room left.
      // Fair tasks with no other per-key limit: their keys in turn order (claim-fair.sql), at the cost of the batch.
      const fairOnly = q.limited.fairOnly;
      const fairTasks = locked.flatMap((row) => (fairOnly.includes(row.task) ? [row.task] : []));
      const keyedTasks = locked.flatMap((row) => (keyed.includes(row.task) && !fairOnly.includes(row.task) ? [row.task] : []));
      let claimed = rows;
      if (fairTasks.length > 0) claimed = [...claimed, ...(await claimFair(tx, q, [q.queue, room - claimed.length, workerId, leaseMs, lost, fairTasks]))];
      if (keyedTasks.length === 0 || claimed.length >= room) return claimed;
      const more = await tx.query<JobRow>(SQL.claimKeyed, [q.queue, room - claimed.length, workerId, leaseMs, lost, keyedTasks], PREPARED.claimKeyed);
      return claimed.length === 0 ? more : [...claimed, ...more];
    }),
  );
}

/**
 * Fair tasks that count nothing at claim: claim-fair.sql on its own, one statement and one commit, no lock on the
 * tasks' limit rows (concurrent claims pass each other's locked jobs).
 */
async function claimFairAlone(q: PgQueue, params: [string, number, ...unknown[]]): Promise<Job[]> {
  return (await claimFair(q.db, q, params, q.claimFairSql)).map(rowToJob);
}

/**
 * claim-fair.sql: the jobs of fair tasks in turn order. When it reports due jobs waiting for a turn (a delayed job
 * come due, a retry, a dead letter retried), they are placed (fair-place.sql, at most a few claims' worth, the
 * oldest due first), and the room left, if any, is claimed again, so a job that comes due is never behind a claim
 * that could have taken it.
 */
async function claimFair(
  tx: SqlExecutor,
  q: PgQueue,
  params: [string, number, ...unknown[]],
  sql: { text: string; prepared: { name: string } } = { text: SQL.claimFair, prepared: PREPARED.claimFair },
): Promise<JobRow[]> {
  const { rows, pending } = await claimFairOnce(tx, params, sql);
  const [queue, limit, , , , tasks] = params;
  if (!pending) return rows;
  // Placed even when this claim is full: they take turns among the keys waiting, so the next claims reach them.
  await tx.query(SQL.fairPlace, [queue, tasks, Math.max(limit * PLACE_AHEAD, PLACE_MIN), null, null], PREPARED.fairPlace);
  if (rows.length >= limit) return rows;
  const more = await claimFairOnce(tx, [queue, limit - rows.length, ...params.slice(2)], sql);
  return rows.length === 0 ? more.rows : [...rows, ...more.rows];
}

/** How many waiting jobs one placement takes: this many claims' worth, and never fewer than PLACE_MIN. */
const PLACE_AHEAD = 4;
const PLACE_MIN = 500;

async function claimFairOnce(tx: SqlExecutor, params: unknown[], sql: { text: string; prepared: { name: string } }): Promise<{ rows: JobRow[]; pending: boolean }> {
  const found = await tx.query<Omit<JobRow, "id"> & { id: string | null; pending: boolean | null }>(sql.text, params, sql.prepared);
  const rows: JobRow[] = [];
  let pending = false;
  for (const row of found) {
    if (row.id !== null) rows.push(row as JobRow);
    else if (row.pending) pending = true;
  }
  return { rows, pending };
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
