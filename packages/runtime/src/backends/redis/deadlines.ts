import { expiredError } from "../../core/deadline.js";
import type { AttemptError, Job } from "../../core/job.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { RedisQueue } from "./context.js";

/**
 * Deadlines (docs/flow-control.md#deadlines) on Redis. The job's JSON carries its deadline, so the worker that claims
 * it late ends it (expire.lua). For the sweep, a batch with a deadline adds its new jobs to the deadlines ZSET after
 * the enqueue (one more call, for such batches only); a job enqueued whose entry a crash left unwritten is still
 * ended by its claim.
 */
export async function enqueueWithDeadlines(
  q: RedisQueue,
  jobs: Job[],
  enqueue: (q: RedisQueue, params: { jobs: Job[] }) => Promise<EnqueueResult>,
): Promise<EnqueueResult> {
  const result = await enqueue(q, { jobs });
  const inserted = new Set(result.inserted);
  const scored: Array<string | number> = [];
  for (const job of jobs) if (job.expiresAt !== null && inserted.has(job.id)) scored.push(job.expiresAt.getTime(), job.id);
  if (scored.length > 0) await q.redis.zadd(q.keys.deadlines, ...scored);
  return result;
}

/** How long an expired job's hash lives: as a cancelled one's (outcomes.ts cancel). */
function keepMs(q: RedisQueue): number {
  return q.cancelledRetentionMs === 0 ? 0 : Math.max(q.cancelledRetentionMs, 60 * 60 * 1000);
}

export async function expire(q: RedisQueue, { workerId, job, error }: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
  await q.script("expire", "expire a job past its deadline", [workerId, job.id, JSON.stringify(error), keepMs(q), q.keys.cancelled]);
  q.held.get(workerId)?.delete(job.id);
}

export async function expireDue(q: RedisQueue, { limit }: { limit: number }): Promise<number> {
  const error = { ...expiredError(new Date(0), 0, "sweep"), message: "not started before its deadline (the job's expiresAt); the sweep for jobs no claim reached ended it without running" };
  const expired = await q.script("expire-due", "expire jobs past their deadline", [q.keys.deadlines, limit, JSON.stringify(error), keepMs(q), q.keys.cancelled, q.keys.parkedPrefix, q.keys.limitPrefix]);
  return Number(expired);
}
