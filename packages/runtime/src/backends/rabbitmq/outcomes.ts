import type { AttemptError, Job, JobJSON } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import { notSupported, type CancelResult, type ClaimParams, type CompleteParams, type LeaseReport, type SnoozeParams } from "../../core/queue-backend.js";
import type { Delivery } from "./consumer.js";
import type { RabbitQueue } from "./context.js";
import { DOCS } from "./errors.js";
import { completeStep, killStep } from "./flows.js";
import { putBack, replace, route, snoozesOf, spent, toDead } from "./publications.js";
import { withRunIn } from "./progress.js";
import type { AttemptRun } from "../../core/job-life.js";

/**
 * A delivered job of a limited task runs only with a slot taken in the database (docs/rabbitmq.md#task-limits); over
 * its limit it goes back through the delay cascade, its attempt unspent, to be delivered again when the limit
 * may allow it (the rate window's next opening, or half a second for a concurrency limit).
 */
export async function claim(q: RabbitQueue, params: ClaimParams): Promise<Job[]> {
  const jobs = await q.consumer.claim(params);
  if (q.limited.size === 0 || !jobs.some((job) => q.limited.has(job.task))) return jobs;
  const store = q.options.limits!;
  const kept: Job[] = [];
  for (const job of jobs) {
    if (!q.limited.has(job.task)) {
      kept.push(job);
      continue;
    }
    const taken = await store.take({ task: job.task, jobId: job.id, leaseMs: params.leaseMs });
    if (taken.granted) kept.push(job);
    else await release(q, { workerId: params.workerId, jobs: [job], availableAt: new Date(Date.now() + taken.retryInMs) });
  }
  return kept;
}

/** A limited task's job that ended frees its slot. */
async function freeSlot(q: RabbitQueue, job: Job): Promise<void> {
  if (q.limited.has(job.task)) await q.options.limits?.free({ jobIds: [job.id] });
}

/** A unique job that reached `state` gives its key back unless it holds it there (docs/tasks.md#unique-jobs). */
async function releaseKey(q: RabbitQueue, job: Job, state: JobState): Promise<void> {
  if (job.unique?.states && !job.unique.states.includes(state)) await q.options.uniqueKeys?.release({ jobIds: [job.id], state });
}

/** A held job that was cancelled is acked (dropped) here and reported; the rest have their lease extended. */
export async function extendLeases(q: RabbitQueue, params: { workerId: string; jobIds: string[]; leaseMs: number }): Promise<LeaseReport> {
  const cancelled: string[] = [];
  if (q.cancelledIds.size > 0) {
    for (const id of params.jobIds) {
      if (!q.cancelledIds.has(id)) continue;
      const delivery = q.consumer.takeById(params.workerId, id);
      if (!delivery) continue;
      q.consumer.ack(delivery);
      cancelled.push(id);
    }
  }
  q.consumer.extend(params);
  if (q.limited.size > 0 && q.options.limits) await q.options.limits.extend({ jobIds: params.jobIds, leaseMs: params.leaseMs });
  return { cancelled };
}

export async function complete(q: RabbitQueue, params: CompleteParams): Promise<void> {
  const { workerId, job } = params;
  if (job.flow && q.options.flows) {
    if (await completeStep(q, q.options.flows, params)) await freeSlot(q, job);
    return;
  }
  const delivery = q.consumer.take(workerId, job);
  if (!delivery) return;
  q.consumer.ack(delivery);
  await freeSlot(q, job);
  if (job.unique) await releaseKey(q, job, JobState.completed);
}

export async function retry(q: RabbitQueue, params: { workerId: string; job: Job; error: AttemptError; availableAt: Date; run?: AttemptRun | undefined }): Promise<void> {
  const delivery = q.consumer.take(params.workerId, params.job);
  if (!delivery) return;
  const json = withRunIn(spent(delivery, params.error), params.run);
  json.availableAt = params.availableAt.toISOString();
  await replace(q, delivery, [route(q, json, { dueMs: params.availableAt.getTime(), snoozes: snoozesOf(delivery) })]);
  await freeSlot(q, params.job);
}

export async function kill(q: RabbitQueue, params: { workerId: string; job: Job; error: AttemptError; run?: AttemptRun | undefined }): Promise<void> {
  if (params.job.flow && q.options.flows) {
    if (await killStep(q, q.options.flows, params)) await freeSlot(q, params.job);
    return;
  }
  const delivery = q.consumer.take(params.workerId, params.job);
  if (!delivery) return;
  await replace(q, delivery, [toDead(q, withRunIn(spent(delivery, params.error), params.run))]);
  await freeSlot(q, params.job);
  if (params.job.unique) await releaseKey(q, params.job, JobState.dead);
}

/**
 * release for one job at a later time through the delay cascade, the message republished as it was published
 * (its attempts never included this delivery) with its snooze count, carried in a header, raised by one.
 */
export async function snooze(q: RabbitQueue, { workerId, job, availableAt, maxSnoozes, run }: SnoozeParams): Promise<{ snoozed: boolean }> {
  const held = q.consumer.heldDeliveries().find((d) => d.json.id === job.id && d.workerId === workerId && !d.settled);
  // At the limit the delivery stays this worker's, for kill.
  if (!held || snoozesOf(held) >= maxSnoozes) return { snoozed: false };
  const delivery = q.consumer.take(workerId, job);
  if (!delivery) return { snoozed: false };
  const json: JobJSON = withRunIn({ ...delivery.json, availableAt: availableAt.toISOString() }, run);
  await replace(q, delivery, [route(q, json, { dueMs: availableAt.getTime(), snoozes: snoozesOf(delivery) + 1 })]);
  await freeSlot(q, job);
  return { snoozed: true };
}

/**
 * A waiting message cannot be taken out of the middle of a RabbitMQ queue: the cancellation is recorded in the
 * service's database instead, every process reads it within about a second, and the message is dropped when it
 * is delivered; a running job's worker learns it at its next heartbeat. The broker cannot tell whether a job
 * exists or has finished, so any id not already recorded answers `cancelled: true`. Without the database:
 * NotSupportedError (docs/rabbitmq.md#cancelling-a-job).
 */
export async function cancel(q: RabbitQueue, { id }: { id: string }): Promise<CancelResult> {
  const store = q.options.cancellations;
  if (!store) {
    throw notSupported("cancellation", `job ${id} cannot be cancelled: RabbitMQ cannot take a waiting message out of the middle of a queue, and this service has no database to record the cancellation in`, {
      hint: `enable the "database" plugin: cancellations are then recorded in jfast_cancelled_jobs and applied when the message is delivered`,
      docs: `${DOCS}#cancelling-a-job`,
    });
  }
  const fresh = await store.record({ id });
  q.cancelledIds.add(id);
  await q.options.flows?.cancelStep({ jobId: id });
  // Whatever the job is: a key it holds by state and not when cancelled is free now.
  await q.options.uniqueKeys?.release({ jobIds: [id], state: JobState.cancelled });
  if (q.limited.size > 0) await q.options.limits?.free({ jobIds: [id] });
  return { cancelled: fresh, state: JobState.cancelled };
}

export async function release(q: RabbitQueue, { workerId, jobs, availableAt }: { workerId: string; jobs: Job[]; availableAt?: Date }): Promise<void> {
  const deliveries = jobs.map((job) => q.consumer.take(workerId, job)).filter((d): d is Delivery => d !== null);
  // The message as it was published: its attempts never included this delivery, so the attempt is returned.
  // A later time (a paused task's job handed back) goes through the delay cascade.
  const at = availableAt && availableAt.getTime() > Date.now() ? availableAt : null;
  await putBack(q, deliveries, { json: (d) => ({ ...d.json, availableAt: (at ?? new Date()).toISOString() }), dueMs: at?.getTime() });
  const limited = jobs.filter((job) => q.limited.has(job.task)).map((job) => job.id);
  if (limited.length > 0) await q.options.limits?.free({ jobIds: limited });
}
