import { JobState } from "../../core/job-state.js";
import {
  ListState,
  notSupported,
  type DeadJob,
  type Depths,
  type JobActionResult,
  type JobUpdate,
  type JobInfo,
  type JobListing,
  type ListJobsParams,
  type RetryDeadParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { RabbitQueue } from "./context.js";
import { DOCS } from "./errors.js";
import { jobLifeFields, type JobProgress } from "../../core/job-life.js";
import type { JobJSON } from "../../core/job.js";
import { deliveryProgress } from "./progress.js";

const DEPTH_CHANNELS = 4;

/** Why each state but dead cannot be listed (listJobs). */
const UNLISTABLE: Record<Exclude<ListState, "dead">, string> = {
  ready: "a waiting message cannot be read without taking it out of its queue (the broker reports only how many there are)",
  scheduled: "a delayed message waits in the delay queues, which cannot be read without taking their messages out",
  running: "the broker does not report which messages other consumers hold; each process knows only its own",
  completed: "an acknowledged message is gone; the broker keeps no record of completed jobs",
  cancelled: "a cancellation is recorded by id only, and its message is dropped when it is delivered",
  expired: "a message delivered after its job's deadline is acknowledged and gone, as a completed one is",
};

export function listDead(q: RabbitQueue, params: { limit: number; offset?: number }): Promise<DeadJob[]> {
  return q.dead.list(params);
}

/** A dead flow step retried: its flow runs again (FlowStore.revive), after its message is back in the work queue. */
export async function retryDead(q: RabbitQueue, params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
  const result = await q.dead.retry(params);
  await q.options.flows?.revive({ jobIds: result.retried });
  return result;
}

/**
 * `jfast keys rotate`: dead letters, and flow steps still in the service's database (`waiting` counts those). A
 * waiting message cannot be changed in the broker, nor taken out of the middle of a queue and put back without
 * racing the workers; it keeps its key until a worker takes it.
 */
export async function rewriteStored(q: RabbitQueue, params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
  const { dead, skipped } = await q.dead.rewrite(params);
  // Flow steps not yet published wait in the service's database, where they can be rewritten.
  const steps = await q.options.flows?.rewriteWaiting(params);
  if (steps) skipped.push(...steps.skipped);
  return {
    waiting: steps ? steps.rewritten : null,
    waitingNotSupported: `RabbitMQ cannot rewrite a message waiting in the broker${steps ? " (only flow steps not yet published, kept in the database, were rewritten)" : ""}: waiting jobs keep the key they were encrypted with until a worker takes them, so keep that key in JFAST_ENCRYPTION_KEYS (after the new one) until the queue has drained`,
    dead,
    skipped,
  };
}

export function discardDead(q: RabbitQueue, params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
  return q.dead.discard(params);
}

/**
 * ready: the work queue's message count plus what this process was pushed and has not claimed.
 * scheduled: every delay level's message count. running: jobs this process runs (the broker does not report
 * other consumers' unacked messages over AMQP). dead: the dead queue's message count.
 */
export async function depths(q: RabbitQueue): Promise<Depths> {
  // Round trips on the consuming channel before and after the counts, so a message is never in flight
  // between the broker's count and our buffer when we add them up.
  if (q.consumer.isConsuming) await q.consumer.barrier();
  const counts = await q.connection.withChannels(DEPTH_CHANNELS, "read queue depths", async (channels) => {
    const names = [q.names.work, q.names.dead, ...Array.from({ length: q.shape.levels }, (_, level) => q.names.delayLevel(level))];
    const counts = await Promise.all(
      channels.map(async (channel, index) => {
        const mine: Array<[string, number]> = [];
        for (let i = index; i < names.length; i += channels.length) mine.push([names[i]!, (await channel.checkQueue(names[i]!)).messageCount]);
        return mine;
      }),
    );
    const byName = new Map(counts.flat());
    const scheduled = names.slice(2).reduce((sum, name) => sum + (byName.get(name) ?? 0), 0);
    return { ready: byName.get(q.names.work) ?? 0, dead: byName.get(q.names.dead) ?? 0, scheduled };
  });
  if (q.consumer.isConsuming) await q.consumer.barrier();
  return { ready: counts.ready + q.consumer.bufferedCount, scheduled: counts.scheduled, running: q.consumer.heldCount, dead: counts.dead };
}

/** No payload index: the admin API reads a bounded number of dead letters instead (docs/admin-api.md#job-search). */
export async function searchDead(q: RabbitQueue): Promise<{ rows: DeadJob[]; next: string | null }> {
  throw notSupported("payloadIndex", "the RabbitMQ queue keeps no index of dead letters' payloads", {
    hint: "search by payload reads the newest dead letters instead; the PostgreSQL queue answers it through an index",
    docs: "jfast docs admin-api#job-search",
  });
}

/**
 * Not counted per task: the work queue and the delay cascade hold every task's messages, and the broker reports
 * only a queue's total; counting per task would mean taking every message out. depths() has the totals.
 */
export async function depthsByTask(q: RabbitQueue): Promise<TaskDepths> {
  throw notSupported("perTaskDepths", "RabbitMQ does not count messages per task: a queue holds every task's messages and reports only its total", {
    hint: "the queue's totals are in depths() (/queue/stats); for per-task depths use the postgres or redis backend",
    docs: `${DOCS}#limits`,
  });
}

/**
 * Dead letters only, from the dead-letter queue (browsed and put back, as listDead does). A waiting message
 * cannot be read without taking it out of its queue, and the broker keeps no record of a running, completed or
 * cancelled job: NotSupportedError naming why (docs/rabbitmq.md#limits).
 */
export async function listJobs(q: RabbitQueue, params: ListJobsParams): Promise<JobListing> {
  if (params.state === ListState.dead) return q.dead.page(params);
  throw notSupported("listableStates", `RabbitMQ cannot list ${params.state} jobs: ${UNLISTABLE[params.state]}`, {
    hint: "dead letters can be listed; look a job up by id (running in this process, or dead), or use the postgres or redis backend to browse every state",
    docs: `${DOCS}#limits`,
  });
}

/** A waiting message cannot be changed in place nor taken out of the middle of its queue. */
export async function runNow(q: RabbitQueue, { id }: { id: string }): Promise<JobActionResult> {
  throw notSupported("jobActions", `job ${id} cannot be run now: RabbitMQ cannot take a waiting message out of the middle of a queue or change its delay`, {
    hint: "enqueue a new job with the same payload instead, and cancel this one",
    docs: `${DOCS}#limits`,
  });
}

/** A published message is immutable: its payload, priority and delay are the broker's once it is sent. */
export async function updateJob(q: RabbitQueue, { id }: JobUpdate): Promise<JobActionResult> {
  throw notSupported("jobActions", `job ${id} cannot be edited: RabbitMQ cannot change a message once it is published`, {
    hint: "cancel it (jfast jobs cancel) and make a new job with the edited payload (jfast jobs create or the dashboard's Duplicate)",
    docs: `${DOCS}#limits`,
  });
}

export async function deleteJob(q: RabbitQueue, { id }: { id: string }): Promise<JobActionResult> {
  throw notSupported("jobActions", `job ${id} cannot be deleted: RabbitMQ cannot take a waiting message out of the middle of a queue`, {
    hint: "cancel it instead (jfast jobs cancel): the cancellation is recorded and the message dropped when it is delivered",
    docs: `${DOCS}#limits`,
  });
}

/**
 * Finds a job this process holds (running or pushed to it), a flow step (kept in the service's database), or a
 * dead letter. A job waiting in the work queue or the cascade cannot be looked up by id in RabbitMQ without taking
 * it out: NotSupportedError.
 */
export async function getJob(q: RabbitQueue, { id }: { id: string }): Promise<JobInfo | null> {
  const running = q.consumer.heldDeliveries().find((d) => d.json.id === id);
  if (running) {
    const job = { ...structuredClone(running.json), attempts: running.json.attempts + 1 };
    const state = q.cancelledIds.has(id) ? JobState.cancelled : JobState.running;
    return {
      job,
      state,
      lockedBy: running.workerId,
      lockedUntil: running.lockedUntil === null ? null : new Date(running.lockedUntil).toISOString(),
      diedAt: null,
      ...lifeOf(job, state, structuredClone(deliveryProgress(running))),
    };
  }
  const pushed = q.consumer.bufferedDeliveries().find((d) => d.json.id === id);
  if (pushed) {
    const job = structuredClone(pushed.json);
    return { job, state: JobState.ready, lockedBy: null, lockedUntil: null, diedAt: null, ...lifeOf(job, JobState.ready) };
  }
  const step = await q.options.flows?.step({ jobId: id });
  if (step) {
    const diedAt = step.state === JobState.dead ? step.finishedAt : null;
    return { job: step.job, state: step.state, lockedBy: null, lockedUntil: null, diedAt };
  }
  const dead = await q.dead.find(id);
  if (dead) {
    return { job: dead.json, state: JobState.dead, lockedBy: null, lockedUntil: null, diedAt: new Date(dead.diedAt).toISOString(), ...lifeOf(dead.json, JobState.dead) };
  }
  throw notSupported("jobLookup", `job ${id} is not a dead letter and not running in this process; RabbitMQ cannot look up a waiting message by id`, {
    hint: "dead letters and jobs this process runs can be looked up; for jobs waiting in the queue use the RabbitMQ management UI",
    docs: `${DOCS}#limits`,
  });
}

/** A job's life from the records its message carries (progress.ts); `runs` is shown as `attempts`, not in `job`. */
function lifeOf(job: JobJSON, state: JobState, progress?: JobProgress) {
  const { runs } = job;
  delete job.runs;
  return jobLifeFields({ runs, errors: job.errors, createdAt: job.createdAt, running: state === JobState.running, progress });
}
