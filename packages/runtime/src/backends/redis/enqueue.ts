import { claimedCopy, firstHandOff, type Job } from "../../core/job.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import { hasUnique, scopedUniqueKey } from "../../core/unique.js";
import { announceBatch, packJob, type RedisQueue } from "./context.js";

/** A batch this large goes to the ready list whole: a worker's few free slots are not worth the extra arguments. */
const HAND_OFF_MAX_BATCH = 2000;

export async function enqueue(q: RedisQueue, { jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
  if (jobs.length === 0) return { inserted: [] };
  // Taken whichever way the batch is written: once handed to Redis, these Job objects are never new again.
  const fresh = firstHandOff(jobs);
  if (hasUnique(jobs)) return enqueueUnique(q, jobs);
  // A limited task's job is never handed over in process: only the claim may start it.
  if (q.offers.size > 0 && jobs.length <= HAND_OFF_MAX_BATCH && !q.limited.any(jobs)) {
    const handedOff = await enqueueHandingOff(q, jobs);
    if (handedOff) return handedOff;
  }
  if (q.limited.fair.size > 0 && jobs.some((job) => q.limited.fair.has(job.task))) return enqueueKeyed(q, jobs);
  const inserted = (await q.script("enqueue", "enqueue", plainArgs(jobs, fresh), q.replicaWait)) as string[];
  await announceBatch(q, jobs, inserted);
  return { inserted };
}

/**
 * enqueue.lua's arguments. New jobs (no attempt made, no error: every job a caller makes) sharing one max_attempts,
 * as a bulk enqueue of one task's jobs does, go as three arguments each with the max_attempts once; any other batch
 * as packJob writes them, six each. `fresh` (firstHandOff): every id was generated here and never handed to a
 * backend, so none can be stored yet and the script asks no EXISTS for them (a batch of new jobs only).
 */
function plainArgs(jobs: readonly Job[], fresh: boolean): Array<string | number> {
  const shared = jobs[0]!.maxAttempts;
  let compact = true;
  for (let i = 0; i < jobs.length && compact; i++) {
    const job = jobs[i]!;
    compact = job.attempts === 0 && job.errors.length === 0 && job.maxAttempts === shared;
  }
  if (!compact) {
    const args: Array<string | number> = ["", ""];
    for (const job of jobs) packJob(job, args);
    return args;
  }
  const args: Array<string | number> = new Array(2 + 3 * jobs.length);
  args[0] = shared ?? 0;
  args[1] = fresh ? "1" : "";
  for (let i = 0, at = 2; i < jobs.length; i++, at += 3) {
    const job = jobs[i]!;
    args[at] = job.id;
    args[at + 1] = JSON.stringify(job);
    args[at + 2] = job.availableAt.getTime();
  }
  return args;
}

/**
 * A batch with a job of a task with fairness (enqueue-keyed.lua): such a job waits on its key's own list, and idle
 * workers are told at once (they block on the ready lists, which it is not on).
 */
async function enqueueKeyed(q: RedisQueue, jobs: Job[]): Promise<EnqueueResult> {
  const args: Array<string | number> = [q.keys.limitPrefix];
  for (const job of jobs) {
    packJob(job, args);
    const fair = q.limited.fair.has(job.task);
    args.push(fair ? job.task : "", fair ? (job.limitKey ?? "") : "");
  }
  const inserted = (await q.script("enqueue-keyed", "enqueue", args, q.replicaWait)) as string[];
  if (inserted.length > 0) await q.announce(Math.min(...jobs.map((j) => j.availableAt.getTime())));
  return { inserted };
}

/** A batch with a unique job (enqueue-unique.lua): never handed over in process, so a duplicate never runs. */
async function enqueueUnique(q: RedisQueue, jobs: Job[]): Promise<EnqueueResult> {
  const args: Array<string | number> = [q.keys.uniquePrefix];
  for (const job of jobs) {
    const unique = job.unique;
    packJob(job, args);
    args.push(unique ? scopedUniqueKey(job) : "", unique?.periodMs ?? 0, unique?.states?.join(",") ?? "");
  }
  const [inserted, pairs] = (await q.script("enqueue-unique", "enqueue", args, q.replicaWait)) as [string[], string[]];
  await announceBatch(q, jobs, inserted);
  if (pairs.length === 0) return { inserted };
  const duplicates = new Map<string, string>();
  for (let i = 0; i < pairs.length; i += 2) duplicates.set(pairs[i]!, pairs[i + 1]!);
  return { inserted, duplicates };
}

/**
 * An idle worker of this process waits: the due jobs of the batch (up to its free slots) are stored already
 * claimed by it and handed over in memory once Redis answers, the rest stored ready as usual
 * (enqueue-hand-off.lua). null when no worker has a free slot for a due job: the plain enqueue runs instead.
 */
async function enqueueHandingOff(q: RedisQueue, jobs: Job[]): Promise<EnqueueResult | null> {
  // A worker that never claimed here has not had its earlier processing list returned yet (claim does that).
  const { handedTo, reserved } = q.offers.reserve(jobs, Date.now(), (offer) => q.held.has(offer.workerId));
  if (reserved.size === 0) return null;
  const args: Array<string | number> = [q.workerTtlMs, q.keys.paused];
  // Ids this call put in a worker's held set, and only those: an id given again while its job runs is held
  // already, and must stay so.
  const marked = new Set<number>();
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i]!;
    const offer = handedTo[i];
    packJob(job, args);
    args.push(offer?.workerId ?? "", offer?.leaseMs ?? 0);
    // Held before the script is sent: a claim of this worker sent after it must not deliver these ids again
    // as jobs whose claim reply was lost (claim.lua), since they come to the worker from here.
    const held = offer ? q.held.get(offer.workerId)! : null;
    if (held && !held.has(job.id)) {
      held.add(job.id);
      marked.add(i);
    }
  }
  let inserted: string[];
  let handed: Set<number>;
  try {
    const [ids, positions] = (await q.script("enqueue-hand-off", "enqueue", args, q.replicaWait)) as [string[], number[]];
    inserted = ids;
    handed = new Set(positions.map((position) => position - 1));
  } catch (error) {
    // If the script did run and only its reply was lost, the jobs sit in the worker's processing list, not
    // held: its next claim hands them out (attempt counted once), as for any claim whose reply was lost.
    for (const i of marked) q.held.get(handedTo[i]!.workerId)?.delete(jobs[i]!.id);
    for (const [offer, count] of reserved) offer.cancel(count);
    throw error;
  }
  for (const [offer, count] of reserved) {
    const held = q.held.get(offer.workerId);
    const claimed: Job[] = [];
    for (let i = 0; i < jobs.length; i++) {
      if (handedTo[i] !== offer || !handed.has(i)) continue;
      // A claim answered meanwhile may have dropped the id from the held set before the script ran.
      held?.add(jobs[i]!.id);
      claimed.push(claimedCopy(jobs[i]!));
    }
    // Marked for this worker but stored ready (or not at all: the id existed): not this worker's to hold.
    const kept = new Set(claimed.map((job) => job.id));
    for (const i of marked) if (handedTo[i] === offer && !kept.has(jobs[i]!.id)) held?.delete(jobs[i]!.id);
    if (claimed.length > 0) offer.deliver(claimed, count);
    else offer.cancel(count);
  }
  await announceBatch(q, jobs, inserted);
  return { inserted };
}
