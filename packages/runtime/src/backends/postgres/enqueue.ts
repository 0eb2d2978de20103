import { claimedCopy, firstHandOff, type Job } from "../../core/job.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { hasUnique } from "../../core/unique.js";
import { PREPARED, type PgQueue } from "./context.js";
import { jobsToColumns, numberArray, textArray } from "./job-rows.js";
import { SQL } from "./load-sql.js";
import { enqueueUnique } from "./unique-enqueue.js";
import { deadlinesPending, writeWithDeadlines } from "./deadlines.js";
import { hasDeadline } from "../../core/deadline.js";
import { hasDebounce } from "../../core/debounce.js";
import { debouncePending, writeDebounced } from "./debounce.js";

/**
 * A batch of new jobs larger than this is written as several statements of this many rows in one transaction,
 * each built while the server runs the one before it (see insertPipelined).
 */
const PIPELINE_ROWS = 1000;

export function enqueue(q: PgQueue, { jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
  // A bulk enqueue goes through the table (pipelined): a worker's few free slots are not worth one huge statement.
  // A limited task's job is never handed over: only the claim may start it.
  if (!hasUnique(jobs) && q.offers.size > 0 && jobs.length > 0 && jobs.length < 2 * PIPELINE_ROWS && !q.limited.any(jobs) && !hasDeadline(jobs) && !hasDebounce(jobs)) return enqueueHandingOff(q, jobs);
  return enqueueWithin(q, { executor: q.db, jobs });
}

/**
 * An idle worker of this process waits: the due jobs of a batch of new ones (up to its free slots) are stored
 * already claimed by it and handed over in memory after the commit, the rest stored ready as usual
 * (enqueue-hand-off.sql). Only new jobs (`firstHandOff`: an id passed in may exist already, and only an
 * insert that cannot conflict can claim in the same statement), and never inside a caller's transaction
 * (the commit is the caller's, after this returns).
 */
async function enqueueHandingOff(q: PgQueue, jobs: Job[]): Promise<EnqueueResult> {
  if (!firstHandOff(jobs)) return insert(q, { executor: q.db, jobs, fresh: false });
  const { handedTo, reserved } = q.offers.reserve(jobs, Date.now());
  if (reserved.size === 0) return insert(q, { executor: q.db, jobs, fresh: true });
  const lockedBy = handedTo.map((offer) => offer?.workerId ?? null);
  const leaseMs = handedTo.map((offer) => offer?.leaseMs ?? null);
  const params = [q.queue, ...jobsToColumns(jobs), textArray(lockedBy), numberArray(leaseMs)];
  let row: { inserted: string | number; ready: string | number } | undefined;
  try {
    [row] = await q.run("enqueue", () => q.db.query<{ inserted: string | number; ready: string | number }>(SQL.enqueueHandOff, params, PREPARED.enqueueHandOff));
  } catch (error) {
    for (const [offer, count] of reserved) offer.cancel(count);
    throw error;
  }
  for (const [offer, count] of reserved) {
    const claimed: Job[] = [];
    for (let i = 0; i < jobs.length; i++) if (handedTo[i] === offer) claimed.push(claimedCopy(jobs[i]!));
    offer.deliver(claimed, count);
  }
  if (Number(row?.ready) > 0) q.wakeUps.committed();
  assertAllInserted(row?.inserted, jobs.length);
  return { inserted: jobs.map((job) => job.id) };
}

/**
 * Inserts the jobs through the caller's executor, i.e. inside their open transaction: the jobs exist iff that
 * transaction commits, and workers are woken once a look-up sees them committed (wake-ups.ts).
 */
export function enqueueWithin(q: PgQueue, { executor, jobs }: { executor: SqlExecutor; jobs: Job[] }): Promise<EnqueueResult> {
  if (debouncePending(jobs)) return writeDebounced(q, executor, jobs, (tx, some) => enqueueWithin(q, { executor: tx, jobs: some }));
  if (deadlinesPending(jobs)) return writeWithDeadlines(q, executor, jobs, (tx) => enqueueWithin(q, { executor: tx, jobs }));
  // Read from the jobs, not from this process's declared limits: a process may enqueue a task it does not run.
  if (hasLimitKey(jobs)) return enqueueKeyed(q, executor, jobs);
  const write = hasUnique(jobs) ? enqueueUniqueJobs(q, executor, jobs) : insert(q, { executor, jobs, fresh: firstHandOff(jobs) });
  if (executor !== q.db) return q.wakeUps.afterCallerWrite(write);
  // insert() wakes workers for its own statements itself.
  return hasUnique(jobs) ? q.wakeUps.afterCommit(write) : write;
}

function hasLimitKey(jobs: readonly Job[]): boolean {
  for (let i = 0; i < jobs.length; i++) if (jobs[i]!.limitKey !== null) return true;
  return false;
}

/**
 * A batch with a job of a task limited per key (docs/flow-control.md#per-key-concurrency): inserted as any other,
 * then its keys stored (and a fair task's due jobs placed at their turns) by fair-place.sql in the same transaction
 * (the caller's, or one opened here), so no claim sees one of its jobs without its key.
 */
function enqueueKeyed(q: PgQueue, executor: SqlExecutor, jobs: Job[]): Promise<EnqueueResult> {
  const keyed = jobs.filter((job) => job.limitKey !== null);
  const write = async (tx: SqlExecutor): Promise<EnqueueResult> => {
    const result = hasUnique(jobs)
      ? await enqueueUnique({ executor: tx, queue: q.queue, jobs })
      : await insertWith(q, { executor: tx, jobs, fresh: firstHandOff(jobs), notify: null });
    // Their keys, and a fair task's due jobs their keys' next turns (docs/flow-control.md#fair-share-across-keys).
    const tasks = [...new Set(keyed.map((job) => job.task))];
    const ids = textArray(keyed.map((job) => job.id));
    await tx.query(SQL.fairPlace, [q.queue, textArray(tasks), keyed.length, ids, textArray(keyed.map((job) => job.limitKey))], PREPARED.fairPlace);
    return result;
  };
  if (hasUnique(jobs)) firstHandOff(jobs);
  if (executor !== q.db) return q.wakeUps.afterCallerWrite(write(executor));
  return q.wakeUps.afterCommit(q.run("enqueue", () => q.db.transaction(write)));
}

/**
 * A batch with a unique job: its own statements. A period-held key and its job's row are written in one
 * transaction (the caller's, or one opened here); a state-held key is its row, one statement, no transaction.
 */
function enqueueUniqueJobs(q: PgQueue, executor: SqlExecutor, jobs: Job[]): Promise<EnqueueResult> {
  firstHandOff(jobs);
  const write = (tx: SqlExecutor) => enqueueUnique({ executor: tx, queue: q.queue, jobs });
  const own = executor === q.db && jobs.some((job) => job.unique?.periodMs != null);
  return q.run("enqueue", () => (own ? q.db.transaction(write) : write(executor)));
}

/**
 * `fresh`: every id was generated here and never stored (`firstHandOff`), so no conflict check is needed. On the
 * backend's own connection, workers are woken by the statement or after it (wake-ups.ts).
 */
function insert(q: PgQueue, { executor, jobs, fresh }: { executor: SqlExecutor; jobs: Job[]; fresh: boolean }): Promise<EnqueueResult> {
  if (jobs.length === 0) return Promise.resolve({ inserted: [] });
  if (executor !== q.db) return insertWith(q, { executor, jobs, fresh, notify: null });
  if (fresh && jobs.length >= 2 * PIPELINE_ROWS) return q.wakeUps.afterCommit(insertPipelined(q, jobs));
  return q.wakeUps.ownStatement((notify) => insertWith(q, { executor, jobs, fresh, notify }));
}

/** `notify`: the channel the statement itself notifies as it commits (the notifying forms, load-sql.ts), or null. */
async function insertWith(q: PgQueue, { executor, jobs, fresh, notify }: { executor: SqlExecutor; jobs: Job[]; fresh: boolean; notify: string | null }): Promise<EnqueueResult> {
  const params = notify === null ? [q.queue, ...jobsToColumns(jobs)] : [q.queue, ...jobsToColumns(jobs), notify];
  if (fresh) {
    // Ids generated here, never stored: all of them are inserted, or the statement fails.
    const [sql, name] = notify === null ? [SQL.enqueueFresh, PREPARED.enqueueFresh] : [SQL.enqueueFreshNotifying, PREPARED.enqueueFreshNotifying];
    const [row] = await q.run("enqueue", () => executor.query<{ inserted: string | number }>(sql, params, name));
    assertAllInserted(row?.inserted, jobs.length);
    return { inserted: jobs.map((job) => job.id) };
  }
  const [sql, name] = notify === null ? [SQL.enqueue, PREPARED.enqueue] : [SQL.enqueueNotifying, PREPARED.enqueueNotifying];
  const rows = await q.run("enqueue", () => executor.query<{ id: string }>(sql, params, name));
  const inserted = new Set(rows.map((r) => r.id));
  // Keep the caller's order (RETURNING does not promise one).
  return { inserted: [...new Set(jobs.map((j) => j.id))].filter((id) => inserted.has(id)) };
}

/**
 * A large batch of new jobs in one transaction of several statements: while the server inserts one slice,
 * this process builds the next one's parameters, so the two halves of the work overlap instead of taking
 * turns (a bulk enqueue was about half Node building arrays, half PostgreSQL inserting). All or nothing,
 * as one statement would be; one commit, one wake-up after it.
 */
function insertPipelined(q: PgQueue, jobs: Job[]): Promise<EnqueueResult> {
  return q.run("enqueue", () =>
    q.db.transaction(async (tx) => {
      const columns = (from: number) => [q.queue, ...jobsToColumns(jobs.slice(from, from + PIPELINE_ROWS))];
      const insert = (params: unknown[]) => tx.query<{ inserted: string | number }>(SQL.enqueueFresh, params, PREPARED.enqueueFresh);
      let inserted = 0;
      let inFlight = insert(columns(0));
      for (let from = PIPELINE_ROWS; from < jobs.length; from += PIPELINE_ROWS) {
        const next = columns(from);
        const [row] = await inFlight;
        inserted += Number(row?.inserted);
        inFlight = insert(next);
      }
      const [row] = await inFlight;
      inserted += Number(row?.inserted);
      assertAllInserted(inserted, jobs.length);
      return { inserted: jobs.map((job) => job.id) };
    }),
  );
}

/** An insert of new ids (no ON CONFLICT) stores every row or fails: any other count is a bug to stop on. */
function assertAllInserted(inserted: unknown, expected: number): void {
  if (Number(inserted) !== expected) throw new Error(`inserted ${String(inserted)} of ${expected} new jobs`);
}
