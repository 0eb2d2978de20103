import { flowPlanToJSON, type FlowPlan } from "../../core/flow.js";
import type { FlowStore } from "../../core/flow-store.js";
import type { AttemptError, Job, JobJSON } from "../../core/job.js";
import type { AttemptRun } from "../../core/job-life.js";
import type { CompleteParams } from "../../core/queue-backend.js";
import type { RabbitQueue } from "./context.js";
import { refusePriorities } from "./enqueue.js";
import { encodeJob } from "./message.js";
import { publishPatiently, replace, route, spent, toDead } from "./publications.js";
import { QueueType } from "./topology.js";

/**
 * Flows on RabbitMQ (docs/rabbitmq.md#flows): a broker cannot hold a step back until its parents finish, so the
 * service's database keeps every flow (FlowStore) and a step's message is published only once it is ready. Each
 * outcome of a step runs in this order: the store commits it and its fan-in (a child made ready there, once), then
 * the children made ready are published (confirmed) and marked published, then the parent's message is acked. A
 * crash after the commit leaves the parent's message unacked: redelivered, it finds its step finished and publishes
 * only the children not yet published (`repairLostStep`); the sweep publishes what a dead process made ready and
 * never published. Every step's publishing waits for the broker at most `connectTimeoutMs`; the sweep leaves a
 * step made ready to its maker for 5 s longer.
 */

/** How long the process that made a step ready has to publish it before the sweep may. */
export function publishLeaseMs(q: RabbitQueue): number {
  return q.connectTimeoutMs + 5000;
}

export async function enqueueFlow(q: RabbitQueue, store: FlowStore, { flow }: { flow: FlowPlan }): Promise<{ created: boolean }> {
  if (q.queueType === QueueType.quorum) refusePriorities(flow.steps.map((step) => step.job));
  const { created, ready } = await store.create({ flow: flowPlanToJSON(flow), leaseMs: publishLeaseMs(q) });
  // Written: if the broker cannot take the first steps now, the sweep publishes them.
  await publishReady(q, store, ready);
  return { created };
}

/** The completion of a flow step: committed with its fan-in, then its ready children published, then acked. */
export async function completeStep(q: RabbitQueue, store: FlowStore, { workerId, job, result, spawn, run }: CompleteParams): Promise<Job | null> {
  const delivery = q.consumer.take(workerId, job);
  if (!delivery) return null;
  const ended: JobJSON = { ...delivery.json, attempts: delivery.json.attempts + 1 };
  let ready: JobJSON[];
  try {
    ({ ready } = await store.complete({
      job: ended,
      result,
      spawn: spawn?.map((step) => ({ ...step, job: step.job.toJSON() })),
      leaseMs: publishLeaseMs(q),
      run,
    }));
  } catch (error) {
    // Not recorded: still held under its lease, for the worker to write the outcome again (the database may be
    // failing over, or its pool busy). If the lease runs out first the message goes back as a lost attempt and
    // the step runs again, rather than vanish uncounted.
    q.consumer.restore(delivery, job);
    throw error;
  }
  await publishReady(q, store, ready);
  q.consumer.ack(delivery);
  return job;
}

/** The death of a flow step: committed with its count for "run" children, those published, then dead-lettered. */
export async function killStep(q: RabbitQueue, store: FlowStore, params: { workerId: string; job: Job; error: AttemptError; run?: AttemptRun | undefined }): Promise<Job | null> {
  const delivery = q.consumer.take(params.workerId, params.job);
  if (!delivery) return null;
  const json = spent(delivery, params.error);
  let ready: JobJSON[];
  try {
    ({ ready } = await store.die({ job: json, leaseMs: publishLeaseMs(q), run: params.run }));
  } catch (error) {
    q.consumer.restore(delivery, params.job);
    throw error;
  }
  await publishReady(q, store, ready);
  await replace(q, delivery, [toDead(q, json)]);
  return params.job;
}

/**
 * A flow step's message redelivered (its holder went away; `lost` has that attempt recorded). A step the store
 * has finished was counted already: its children made ready and not published are published, and the message is
 * dropped (dead-lettered again for a dead step, whose dead letter its holder may not have published). Otherwise it
 * is a lost attempt as for any job, its death on the last one counted as kill counts it.
 */
export async function repairLostStep(q: RabbitQueue, store: FlowStore, lost: JobJSON, spentAll: boolean, snoozes: number): Promise<void> {
  const found = await store.recover({ jobId: lost.id, leaseMs: publishLeaseMs(q) });
  if (found) await publishReady(q, store, found.ready);
  if (found?.state === "completed" || found?.state === "cancelled") return;
  if (found?.state === "dead") {
    await q.connection.publish("dead-letter a flow step again", [toDead(q, found.job)]);
    return;
  }
  if (spentAll) {
    if (found) await publishReady(q, store, (await store.die({ job: lost, leaseMs: publishLeaseMs(q) })).ready);
    await q.connection.publish("record a lost attempt", [toDead(q, lost)]);
    return;
  }
  await q.connection.publish("record a lost attempt", [{ exchange: "", routingKey: q.names.work, message: encodeJob(lost, { snoozes }) }]);
}

/** Ready steps a process made and did not publish (it died in between), published now: nothing waits for good. */
export async function sweep(q: RabbitQueue, store: FlowStore): Promise<void> {
  const batch = 500;
  for (;;) {
    const jobs = await store.takeUnpublished({ limit: batch, leaseMs: publishLeaseMs(q) });
    if (!(await publishReady(q, store, jobs)) || jobs.length < batch) return;
  }
}

/**
 * Publishes steps made ready (each due at its own time) and marks them published. A failure is logged, not
 * thrown: their outcome is committed, and the sweep publishes them once their lease has passed. False then.
 */
async function publishReady(q: RabbitQueue, store: FlowStore, jobs: JobJSON[]): Promise<boolean> {
  if (jobs.length === 0) return true;
  try {
    await publishPatiently(q, "publish flow steps", () => jobs.map((json) => route(q, json, { dueMs: Date.parse(json.availableAt) })));
    await store.published({ jobIds: jobs.map((json) => json.id) });
    return true;
  } catch (error) {
    q.options.logger?.warn("could not publish flow steps made ready; the sweep publishes them", { error: (error as Error).message, steps: jobs.length });
    return false;
  }
}
