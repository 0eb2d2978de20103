import { DEFAULT_PRIORITY, type Job } from "../../core/job.js";
import { notSupported, type EnqueueResult } from "../../core/queue-backend.js";
import { hasUnique } from "../../core/unique.js";
import { takeUniqueKeys } from "../../core/unique-store.js";
import type { RabbitQueue } from "./context.js";
import { DOCS } from "./errors.js";
import { publishPatiently, route } from "./publications.js";
import { QueueType } from "./topology.js";

export async function enqueue(q: RabbitQueue, { jobs }: { jobs: Job[] }): Promise<EnqueueResult> {
  let fresh: Job[] = [];
  const seen = new Set<string>();
  for (const job of jobs) {
    if (q.recent.has(job.id) || seen.has(job.id)) continue;
    seen.add(job.id);
    fresh.push(job);
  }
  if (q.queueType === QueueType.quorum) refusePriorities(fresh);
  if (hasUnique(fresh)) return enqueueUnique(q, fresh);
  await publishPatiently(q, "enqueue jobs", () => fresh.map((job) => route(q, job, { dueMs: job.availableAt.getTime() })));
  for (const job of fresh) q.recent.add(job.id);
  return { inserted: fresh.map((job) => job.id) };
}

/**
 * A broker cannot tell whether a message with a key waits somewhere in a queue: the keys are held in the
 * service's database (UniqueStore), taken before the publish and released when the job ends.
 */
async function enqueueUnique(q: RabbitQueue, fresh: Job[]): Promise<EnqueueResult> {
  const store = q.options.uniqueKeys;
  if (!store) {
    throw notSupported("unique", `a unique "${fresh.find((job) => job.unique)!.task}" job cannot be enqueued: RabbitMQ cannot tell whether a message with its key waits in a queue, and this service has no database to hold the key in`, {
      hint: `enable the "database" plugin: unique keys are then held in jfast_unique_keys`,
      docs: `${DOCS}#unique-jobs`,
    });
  }
  const { publish, duplicates, taken } = await takeUniqueKeys(store, fresh);
  try {
    await publishPatiently(q, "enqueue jobs", () => publish.map((job) => route(q, job, { dueMs: job.availableAt.getTime() })));
  } catch (error) {
    await store.release({ jobIds: taken.jobIds, state: null }).catch(() => undefined);
    throw error;
  }
  await store.confirm(taken);
  for (const job of publish) q.recent.add(job.id);
  const inserted = publish.map((job) => job.id);
  return duplicates.size > 0 ? { inserted, duplicates } : { inserted };
}

/** RabbitMQ 3.10's quorum queues keep no message priority: a job that asks for one is refused, not run out of order. */
export function refusePriorities(jobs: readonly Job[]): void {
  const job = jobs.find((j) => j.priority !== DEFAULT_PRIORITY);
  if (!job) return;
  throw notSupported("priority", `a "${job.task}" job of priority ${job.priority} cannot be enqueued on a quorum queue: RabbitMQ 3.10's quorum queues deliver in arrival order and keep no message priority`, {
    hint: `leave the job at the default priority (5), or use queue_type = "classic", whose work queue is a priority queue`,
    docs: `${DOCS}#priority-queue`,
  });
}
