import { Job } from "../core/job.js";
import type { CancelResult, Depths, EnqueuedJob, EnqueueResult, QueueBackend, QueueEnqueueResult } from "../core/queue-backend.js";
import type { TaskRegistry } from "../core/registry.js";
import { taskUniqueFiller } from "./unique-fill.js";
import { JfastError } from "../errors/jfast-error.js";
import type { PausedTasks } from "./paused-tasks.js";
import type { ThroughputRecorder } from "./throughput-recorder.js";

/** `jfast.require("queue")`: enqueue outside any transaction (commits on its own). */
export interface QueueProvider {
  readonly backend: QueueBackend;
  readonly name: string;
  /** Per job, in the order given, its id and whether it was a duplicate of a unique job (docs/tasks.md#unique-jobs). */
  enqueue(job: Job | Job[]): Promise<QueueEnqueueResult>;
  depths(): Promise<Depths>;
  /**
   * Cancels a job (docs/tasks.md#cancelling-a-job): a waiting one never runs; a running one's handler sees its
   * `signal` aborted with reason "cancelled" at its worker's next heartbeat, and the job ends `cancelled`.
   * RabbitMQ: recorded in the database and applied at delivery; without a database NotSupportedError.
   */
  cancel(id: string): Promise<CancelResult>;
  /** Fills in what the caller left to configuration (max attempts) or to its task (unique). */
  prepare(job: Job): Job;
  /** Paused tasks, shared by every process (docs/worker.md#pausing-a-task); null where pausing is not supported. */
  readonly pauses: PausedTasks | null;
  /** Jobs processed, failed and dead per minute and task, as the workers report them (core/throughput.ts). */
  readonly throughput: ThroughputRecorder | null;
}

export function createQueueProvider(params: {
  backend: QueueBackend;
  name: string;
  registry: TaskRegistry;
  defaultMaxAttempts: number;
  /** `[plugin.queue] max_payload_bytes`; no limit when absent. */
  maxPayloadBytes?: number;
  pauses?: PausedTasks | null;
  throughput?: ThroughputRecorder | null;
  /** Tasks of other services this one may enqueue (contracts.toml `[services.<name>] tasks`). */
  foreignTasks?: ReadonlySet<string>;
}): QueueProvider {
  const { backend, registry, defaultMaxAttempts, maxPayloadBytes } = params;
  const foreign = params.foreignTasks ?? new Set<string>();
  const fillUnique = taskUniqueFiller();
  const prepare = (job: Job): Job => {
    if (!(job instanceof Job)) {
      throw new TypeError("enqueue(job) takes a Job: enqueue(new Job({ task: \"invoice.send_email\", payload }))");
    }
    // Refused now rather than dead-lettered on its first claim, far from the typo that made it.
    if (!registry.get(job.task) && !foreign.has(job.task)) throw unknownTask(job.task, registry);
    if (maxPayloadBytes !== undefined) checkPayloadSize(job, maxPayloadBytes);
    const options = registry.get(job.task)?.options;
    job.maxAttempts ??= options?.maxAttempts ?? defaultMaxAttempts;
    if (job.unique !== null || options?.unique !== undefined) fillUnique(job, options?.unique);
    return job;
  };
  return {
    backend,
    name: params.name,
    pauses: params.pauses ?? null,
    throughput: params.throughput ?? null,
    prepare,
    // async: a refused job (not a Job, payload too large) rejects the promise instead of throwing synchronously.
    async enqueue(job) {
      const jobs = (Array.isArray(job) ? job : [job]).map(prepare);
      return perJob(await backend.enqueue({ jobs }), jobs);
    },
    depths: () => backend.depths(),
    cancel: (id) => backend.cancel({ id }),
  };
}

/**
 * A backend's result with each job's outcome, in the order given: its own id, or its holder's when a duplicate.
 * Made when first read: an object per job was a tenth of a bulk enqueue's CPU in this process, for callers that
 * mostly never look.
 */
export function perJob(result: EnqueueResult, jobs: readonly Job[]): QueueEnqueueResult {
  let outcomes: EnqueuedJob[] | undefined;
  const read = (): EnqueuedJob[] => {
    const duplicates = result.duplicates;
    return jobs.map((job) => {
      const holder = duplicates?.get(job.id);
      return holder === undefined ? { id: job.id, duplicate: false } : { id: holder, duplicate: true };
    });
  };
  return Object.defineProperty({ ...result } as QueueEnqueueResult, "jobs", { enumerable: true, get: () => (outcomes ??= read()) });
}

/** The same refusal as `jfast jobs enqueue`: this service declares no such task, nor contracts.toml another's. */
function unknownTask(task: string, registry: TaskRegistry): JfastError {
  return new JfastError(`this service declares no task named "${task}"`, {
    code: "TASK_UNKNOWN",
    hint: `known tasks: ${registry.names().join(", ") || "(none)"}; a task of another service on the same queue is declared in contracts.toml as [services.<name>] tasks = ["${task}"]`,
    docs: "jfast docs tasks#names",
  });
}

/**
 * Refused here, before any backend sees it: a broker or a row holding megabytes slows every claim and every
 * redelivery, and each backend would fail differently (or not at all) past its own limit.
 */
function checkPayloadSize(job: Job, limit: number): void {
  const text = JSON.stringify(job.payload ?? null);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: most payloads are under the limit without counting.
  if (text.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= limit) return;
  throw new JfastError(`the payload of "${job.task}" is ${bytes} bytes, over the limit of ${limit} bytes`, {
    code: "PAYLOAD_TOO_LARGE",
    hint: "store large data elsewhere (a table, object storage) and enqueue its id, or raise [plugin.queue] max_payload_bytes",
    docs: "jfast docs configuration#pluginqueue",
  });
}
