import type { Job, JobJSON } from "../../core/job.js";
import { withRun, type AttemptRun, type JobProgress } from "../../core/job-life.js";
import type { RabbitQueue } from "./context.js";
import type { Delivery } from "./subscription.js";

/**
 * A job's life on RabbitMQ (docs/rabbitmq.md#a-jobs-life): the running job's progress is kept with its delivery in
 * the process that runs it (getJob finds running jobs only there), and each attempt's record travels in the message
 * (`runs`), so a retried message and a dead letter carry every attempt before them. A completed job is acked and
 * kept nowhere, its records with it (capabilities.keepsFinished).
 */
const progressOf = new WeakMap<Delivery, JobProgress>();

export function setProgress(q: RabbitQueue, { workerId, job, progress }: { workerId: string; job: Job; progress: JobProgress }): void {
  const delivery = q.consumer.heldDeliveries().find((d) => d.json.id === job.id && d.workerId === workerId && !d.settled);
  if (delivery) progressOf.set(delivery, progress);
}

export function deliveryProgress(delivery: Delivery): JobProgress | undefined {
  return progressOf.get(delivery);
}

/** The message's JSON with the attempt's record added (the JSON is the caller's copy). */
export function withRunIn(json: JobJSON, run: AttemptRun | undefined): JobJSON {
  if (run) json.runs = withRun(json.runs, run);
  return json;
}
