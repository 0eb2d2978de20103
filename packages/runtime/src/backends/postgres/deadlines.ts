import { expiredError, hasDeadline } from "../../core/deadline.js";
import type { AttemptError, Job } from "../../core/job.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import type { PgQueue } from "./context.js";
import { jsonbText, numberArray, textArray } from "./job-rows.js";
import { SQL } from "./load-sql.js";

/** Batches being written by writeWithDeadlines (its inner enqueue must not come back here). */
const writing = new WeakSet<readonly Job[]>();

export function deadlinesPending(jobs: readonly Job[]): boolean {
  return !writing.has(jobs) && hasDeadline(jobs);
}

/**
 * A batch with a deadline (docs/flow-control.md#deadlines): written as it would be, then the deadlines of the jobs
 * inserted now stored by set-deadlines.sql in the same transaction (the caller's, or one opened here).
 */
export function writeWithDeadlines(q: PgQueue, executor: SqlExecutor, jobs: Job[], enqueue: (tx: SqlExecutor) => Promise<EnqueueResult>): Promise<EnqueueResult> {
  const write = async (tx: SqlExecutor): Promise<EnqueueResult> => {
    writing.add(jobs);
    let result: EnqueueResult;
    try {
      result = await enqueue(tx);
    } finally {
      writing.delete(jobs);
    }
    const inserted = new Set(result.inserted);
    const dated = jobs.filter((job) => job.expiresAt !== null && inserted.has(job.id));
    if (dated.length > 0) {
      await tx.query(SQL.setDeadlines, [q.queue, textArray(dated.map((job) => job.id)), numberArray(dated.map((job) => job.expiresAt!.getTime()))]);
    }
    return result;
  };
  if (executor !== q.db) return write(executor);
  return q.run("enqueue", () => q.db.transaction(write));
}

/** The claim reached the job after its deadline: expired instead of run, the attempt given back (expire.sql). */
export async function expire(q: PgQueue, { workerId, job, error }: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
  await q.run("expire", () => q.db.query(SQL.expire, [q.queue, job.id, workerId, jsonbText(error)]));
}

/** The sweep for jobs no claim reached before their deadline (expire-due.sql). */
export async function expireDue(q: PgQueue, { limit }: { limit: number }): Promise<number> {
  const error = expiredError(new Date(0), 0, "sweep");
  const [row] = await q.run("expireDue", () => q.db.query<{ expired: number | string }>(SQL.expireDue, [q.queue, limit, jsonbText(error)]));
  return Number(row?.expired ?? 0);
}
