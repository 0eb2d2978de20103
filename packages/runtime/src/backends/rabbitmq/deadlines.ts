import type { AttemptError, Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { RabbitQueue } from "./context.js";

/**
 * A job delivered after its deadline (docs/flow-control.md#deadlines) is acknowledged without running: RabbitMQ keeps no
 * finished job, so an expired one is gone as a completed or cancelled one is (the worker logs it with its reason).
 * Its slot and its unique key are given back as for any job that ends.
 */
export async function expire(q: RabbitQueue, { workerId, job }: { workerId: string; job: Job; error: AttemptError }): Promise<void> {
  const delivery = q.consumer.take(workerId, job);
  if (!delivery) return;
  q.consumer.ack(delivery);
  if (q.limited.has(job.task)) await q.options.limits?.free({ jobIds: [job.id] });
  if (job.unique?.states && !job.unique.states.includes(JobState.expired)) await q.options.uniqueKeys?.release({ jobIds: [job.id], state: JobState.expired });
}
