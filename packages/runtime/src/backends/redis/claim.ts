import { Job } from "../../core/job.js";
import type { ClaimParams } from "../../core/queue-backend.js";
import { CorruptJob } from "../../core/corrupt-job.js";
import type { RedisQueue } from "./context.js";
import { decodeJob, type StoredFields } from "./decode.js";

type Row = [id: string, ...fields: StoredFields];

/**
 * claim.lua: leases up to `limit` jobs to the worker and puts their ids in its processing list, in one step; the
 * ids the worker still holds are passed so that a claim whose reply was lost is delivered again.
 */
export async function claim(q: RedisQueue, { workerId, limit, leaseMs, startable = limit }: ClaimParams): Promise<Job[]> {
  if (limit <= 0) return [];
  let held = q.held.get(workerId);
  if (!held) {
    // First use of this id by this process: whatever a previous process left under it comes back first.
    await q.script("recover", "return its processing list", ["own", workerId, q.lostTail]);
    held = new Set();
    q.held.set(workerId, held);
  }
  const [rows, notes, processing] = (await q.script("claim", "claim", [
    workerId,
    limit,
    leaseMs,
    q.workerTtlMs,
    q.lostTail,
    q.keys.paused,
    q.keys.parkedPrefix,
    q.limited.size > 0 ? q.keys.limits : "",
    q.keys.limitPrefix,
    Math.min(limit, startable),
    // A fair task alone is claimed up to `limit`: every other claim the other tasks' jobs go first, so its backlog
    // never holds them back.
    q.limited.fairUncounted.length > 0 && q.fairClaims++ % 2 === 1 ? "1" : "0",
    ...held,
  ])) as [Row[], Array<[string, string, string]>, string[]];
  for (const [kind, id, detail] of notes) {
    q.options.logger?.warn(
      kind === "unknown-id"
        ? `the ready list held an id with no job behind it; it was moved to dead letters as ${CorruptJob.task}`
        : kind === "no-state"
          ? `a stored job had no state field; it was moved to dead letters as ${CorruptJob.task}`
          : kind === "set-aside"
            ? `a stored job could not be read; it was moved to dead letters as ${CorruptJob.task}`
            : "dropped a second reference to a job from the ready list",
      { queue: q.options.queue, entry: id.slice(0, 200), ...(detail ? { [kind === "set-aside" ? "problem" : "state"]: detail } : {}) },
    );
  }
  const listed = new Set(processing);
  for (const id of held) if (!listed.has(id)) held.delete(id);
  const jobs: Job[] = [];
  for (const [id, ...fields] of rows) {
    const decoded = decodeJob(id, fields);
    let job: Job | null = null;
    let problem = "problem" in decoded ? decoded.problem : "";
    if ("job" in decoded) {
      try {
        job = Job.fromJSON(decoded.job);
      } catch (error) {
        problem = `the stored job cannot be rebuilt: ${(error as Error).message}`;
      }
    }
    if (job) {
      held.add(id);
      jobs.push(job);
      continue;
    }
    await q.script("quarantine", "set aside a corrupt job", [workerId, id, problem]);
    q.options.logger?.warn(`a stored job could not be read; it was moved to dead letters as ${CorruptJob.task}`, { queue: q.options.queue, job_id: id, problem });
  }
  return jobs;
}
