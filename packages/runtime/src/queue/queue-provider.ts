import { Job } from "../core/job.js";
import type { Depths, EnqueueResult, QueueBackend } from "../core/queue-backend.js";
import type { TaskRegistry } from "../core/registry.js";

/** `jfast.require("queue")`: enqueue outside any transaction (commits on its own). */
export interface QueueProvider {
  readonly backend: QueueBackend;
  readonly name: string;
  enqueue(job: Job | Job[]): Promise<EnqueueResult>;
  depths(): Promise<Depths>;
  /** Fills in what the caller left to configuration (max attempts). */
  prepare(job: Job): Job;
}

export function createQueueProvider(params: {
  backend: QueueBackend;
  name: string;
  registry: TaskRegistry;
  defaultMaxAttempts: number;
}): QueueProvider {
  const { backend, registry, defaultMaxAttempts } = params;
  const prepare = (job: Job): Job => {
    if (!(job instanceof Job)) {
      throw new TypeError("enqueue(job) takes a Job: enqueue(new Job({ task: \"invoice.send_email\", payload }))");
    }
    job.maxAttempts ??= registry.get(job.task)?.options.maxAttempts ?? defaultMaxAttempts;
    return job;
  };
  return {
    backend,
    name: params.name,
    prepare,
    enqueue(job) {
      const jobs = (Array.isArray(job) ? job : [job]).map(prepare);
      return backend.enqueue({ jobs });
    },
    depths: () => backend.depths(),
  };
}
