import { isPriorityDefaulted, Job } from "../core/job.js";
import type { CancelResult, Depths, EnqueuedJob, EnqueueResult, QueueBackend, QueueEnqueueResult } from "../core/queue-backend.js";
import type { JobEvents } from "../core/job-events.js";
import type { TaskRegistry } from "../core/registry.js";
import { DEFAULT_QUEUE } from "../core/named-queue.js";
import { taskUniqueFiller } from "./unique-fill.js";
import { deadlineOf } from "../core/deadline.js";
import { jobDebounce } from "../core/debounce.js";
import { hasKeyOption, limitKeyOf } from "../core/limits.js";
import { checkPayload, PayloadRefused, type StandardSchemaV1 } from "../core/payload-schema.js";
import type { BatchCreated, BatchOptions, FlowCreated, FlowInput, FlowPlan } from "../core/flow.js";
import { batchCreated, flowCreated, planBatch, planFlow, planForQueue } from "./flows.js";
import { JfastError } from "../errors/jfast-error.js";
import type { PausedTasks } from "./paused-tasks.js";
import type { ThroughputRecorder } from "./throughput-recorder.js";

/** One named queue of the service (docs/queues.md): its own backend instance, paused tasks and throughput. */
export interface NamedQueue {
  /** "default", or the `<name>` of `[queues.<name>]`. */
  readonly name: string;
  /** The backend's name for it: `[plugin.queue] name` for `default`, `<that>:<name>` otherwise. */
  readonly backendName: string;
  readonly backend: QueueBackend;
  readonly pauses: PausedTasks | null;
  readonly throughput: ThroughputRecorder | null;
  /** `[queues.<name>] max_attempts`, else `[plugin.queue] max_attempts`. */
  readonly maxAttempts: number;
}

/** `jfast.require("queue")`: enqueue outside any transaction (commits on its own). */
export interface QueueProvider {
  /** The `default` queue's backend (every queue's: `queues`). */
  readonly backend: QueueBackend;
  /** `[plugin.queue] name`: what the backend calls the `default` queue. */
  readonly name: string;
  /** Every named queue of the service, `default` first (docs/queues.md). */
  readonly queues: ReadonlyMap<string, NamedQueue>;
  /** The named queue a task's jobs go to (its `queue` option; `default` for a task of another service). */
  queueOf(task: string): NamedQueue;
  /** A named queue by name; throws QUEUE_UNKNOWN naming the declared ones. */
  queue(name: string): NamedQueue;
  /** Depths of each named queue, by name. */
  depthsByQueue(): Promise<Record<string, Depths>>;
  /** Per job, in the order given, its id and whether it was a duplicate of a unique job (docs/tasks.md#unique-jobs). */
  enqueue(job: Job | Job[]): Promise<QueueEnqueueResult>;
  /**
   * Starts a flow (docs/flows.md): steps that run after other steps, the results passed on. Checked first (no
   * cycle, no unknown step, not empty: FLOW_INVALID, nothing written), then written at once, committed on its own.
   */
  flow(input: FlowInput): Promise<FlowCreated>;
  /** A batch (docs/flows.md#batches): jobs with a callback once all have finished (`onComplete`) or completed (`onSuccess`). */
  batch(jobs: Job[], options?: BatchOptions): Promise<BatchCreated>;
  /** Depths of all the named queues together. */
  depths(): Promise<Depths>;
  /**
   * Cancels a job (docs/tasks.md#cancelling-a-job): a waiting one never runs; a running one's handler sees its
   * `signal` aborted with reason "cancelled" at its worker's next heartbeat, and the job ends `cancelled`.
   * RabbitMQ: recorded in the database and applied at delivery; without a database NotSupportedError.
   */
  cancel(id: string): Promise<CancelResult>;
  /** Fills in what the caller left to configuration (max attempts) or to its task (max attempts, priority, unique). */
  prepare(job: Job): Job;
  /**
   * Checks the payloads of prepared jobs whose task has a `schema` (docs/tasks.md#payload-schemas): rejects with
   * PAYLOAD_INVALID naming each bad field before anything is written. Null when none of them has a schema.
   */
  checkPayloads(jobs: readonly Job[]): Promise<void> | null;
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
  /** The named queues besides `default` (whose backend, pauses and throughput are the ones above). */
  namedQueues?: readonly NamedQueue[];
  /** Where each job the queue accepted is announced (`job:enqueued`). */
  events?: JobEvents;
}): QueueProvider {
  const { backend, registry, defaultMaxAttempts, maxPayloadBytes } = params;
  const foreign = params.foreignTasks ?? new Set<string>();
  const defaultQueue: NamedQueue = {
    name: DEFAULT_QUEUE,
    backendName: params.name,
    backend,
    pauses: params.pauses ?? null,
    throughput: params.throughput ?? null,
    maxAttempts: defaultMaxAttempts,
  };
  const queues = new Map<string, NamedQueue>([[DEFAULT_QUEUE, defaultQueue], ...(params.namedQueues ?? []).map((q) => [q.name, q] as const)]);
  const queueOf = (task: string): NamedQueue => queues.get(registry.queueOf(task)) ?? defaultQueue;
  const fillUnique = taskUniqueFiller();
  const events = params.events;
  const enqueueInQueues = async (jobs: Job[]): Promise<QueueEnqueueResult> => {
    const results = await Promise.all([...groupByQueue(jobs, queueOf)].map(([queue, group]) => queue.backend.enqueue({ jobs: group })));
    const duplicates = new Map<string, string>();
    for (const r of results) for (const [id, holder] of r.duplicates ?? []) duplicates.set(id, holder);
    return perJob(duplicates.size ? { inserted: results.flatMap((r) => r.inserted), duplicates } : { inserted: results.flatMap((r) => r.inserted) }, jobs);
  };
  const prepare = (job: Job): Job => {
    if (!(job instanceof Job)) {
      throw new TypeError("enqueue(job) takes a Job: enqueue(new Job({ task: \"invoice.send_email\", payload }))");
    }
    // Refused now rather than dead-lettered on its first claim, far from the typo that made it.
    if (!registry.get(job.task) && !foreign.has(job.task)) throw unknownTask(job.task, registry);
    if (maxPayloadBytes !== undefined) checkPayloadSize(job, maxPayloadBytes);
    const options = registry.get(job.task)?.options;
    job.maxAttempts ??= options?.maxAttempts ?? (queues.size === 1 ? defaultMaxAttempts : queueOf(job.task).maxAttempts);
    if (options?.priority !== undefined && isPriorityDefaulted(job)) job.priority = options.priority;
    if (job.unique !== null || options?.unique !== undefined) fillUnique(job, options?.unique);
    if (job.expiresAt === null && (options?.deadline !== undefined || options?.expiresInMs !== undefined)) {
      job.expiresAt = deadlineOf(options, job.createdAt.getTime(), `task "${job.task}"`);
    }
    if (options?.debounce !== undefined) {
      // Its start is the debounce's: delayMs after this enqueue (moved later by the next ones of its key).
      job.debounce = jobDebounce(options.debounce, job.payload, job);
      job.availableAt = new Date(job.createdAt.getTime() + job.debounce.delayMs);
    }
    if (options && hasKeyOption(options)) job.limitKey = limitKeyOf(options, job);
    return job;
  };
  const checkPayloads = (jobs: readonly Job[]): Promise<void> | null => {
    let checking: Promise<void>[] | null = null;
    for (const job of jobs) {
      const schema = registry.get(job.task)?.options.schema;
      if (schema) (checking ??= []).push(checkOne(job, schema));
    }
    return checking && Promise.all(checking).then(() => undefined);
  };
  /**
   * Writes `jobs` and announces them (`job:enqueued`): held while the write is in flight, so that a job handed over
   * in process and claimed before the write's answer is heard is announced first (JobEvents.enqueueing).
   */
  const announced = async <T,>(jobs: readonly Job[], write: () => Promise<T>, duplicate: (result: T, index: number) => boolean): Promise<T> => {
    if (!events?.has("job:enqueued")) return write();
    const pending = events.enqueueing(jobs.map((job) => ({ job, queue: queueOf(job.task).name, duplicate: false })));
    let result: T;
    try {
      result = await write();
    } catch (error) {
      pending.abandon();
      throw error;
    }
    pending.settle((i) => duplicate(result, i));
    return result;
  };
  // A flow whose id is stored already stores nothing: its steps are announced as duplicates.
  const written = (plan: FlowPlan, queue: NamedQueue): Promise<{ created: boolean }> =>
    announced(
      plan.steps.map((s) => s.job),
      () => queue.backend.enqueueFlow({ flow: plan }),
      (result) => !result.created,
    );
  return {
    backend,
    name: params.name,
    pauses: params.pauses ?? null,
    throughput: params.throughput ?? null,
    queues,
    queueOf,
    queue: (name) => namedQueue(queues, name),
    prepare,
    checkPayloads,
    // async: a refused job (not a Job, payload too large) rejects the promise instead of throwing synchronously.
    async enqueue(job) {
      const jobs = (Array.isArray(job) ? job : [job]).map(prepare);
      const checking = checkPayloads(jobs);
      if (checking) await checking;
      // One queue (every service that declares none): straight to its backend, as before named queues.
      const write = async () => (queues.size === 1 ? perJob(await backend.enqueue({ jobs }), jobs) : enqueueInQueues(jobs));
      return announced(jobs, write, (result, i) => result.jobs[i]!.duplicate);
    },
    async depths() {
      if (queues.size === 1) return backend.depths();
      return sumDepths(await Promise.all([...queues.values()].map((q) => q.backend.depths())));
    },
    async depthsByQueue() {
      const entries = await Promise.all([...queues.values()].map(async (q) => [q.name, await q.backend.depths()] as const));
      return Object.fromEntries(entries);
    },
    async flow(input) {
      const { plan, queue } = planForQueue(() => planFlow(input), prepare, queueOf);
      await checkPayloads(plan.steps.map((s) => s.job));
      await written(plan, queue);
      return flowCreated(plan);
    },
    async batch(jobs, options) {
      const { plan, queue } = planForQueue(() => planBatch(jobs, options), prepare, queueOf);
      await checkPayloads(plan.steps.map((s) => s.job));
      await written(plan, queue);
      return batchCreated(plan, jobs);
    },
    cancel: (id) => (queues.size === 1 ? backend.cancel({ id }) : cancelInAnyQueue(queues, id)),
  };
}

/** Jobs by the named queue of their task, each group in the order given. */
export function groupByQueue(jobs: readonly Job[], queueOf: (task: string) => NamedQueue): Map<NamedQueue, Job[]> {
  const groups = new Map<NamedQueue, Job[]>();
  for (const job of jobs) {
    const queue = queueOf(job.task);
    const group = groups.get(queue);
    if (group) group.push(job);
    else groups.set(queue, [job]);
  }
  return groups;
}

function namedQueue(queues: ReadonlyMap<string, NamedQueue>, name: string): NamedQueue {
  const queue = queues.get(name);
  if (queue) return queue;
  throw new JfastError(`this service has no queue named "${name}"`, {
    code: "QUEUE_UNKNOWN",
    hint: `its queues are ${[...queues.keys()].join(", ")}; declare another as [queues.${name}] in jfast.toml`,
    docs: "jfast docs queues#configuration",
  });
}

function sumDepths(all: readonly Depths[]): Depths {
  const sum: Depths = { ready: 0, scheduled: 0, running: 0, dead: 0 };
  for (const d of all) {
    sum.ready += d.ready;
    sum.scheduled += d.scheduled;
    sum.running += d.running;
    sum.dead += d.dead;
    if (d.estimated) sum.estimated = true;
  }
  return sum;
}

/**
 * An id names no queue, so each is asked (cancelling is rare). A backend that finds the job answers with its
 * state; one that cannot look a waiting job up (RabbitMQ recording cancellations) answers `cancelled` for any
 * id, which is right for the queue that holds it and harmless for the others.
 */
async function cancelInAnyQueue(queues: ReadonlyMap<string, NamedQueue>, id: string): Promise<CancelResult> {
  const results = await Promise.all([...queues.values()].map((q) => q.backend.cancel({ id })));
  return results.find((r) => r.cancelled) ?? results.find((r) => r.state !== null) ?? { cancelled: false, state: null };
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
/** A job's payload against its task's schema; the payload stored is the one given (the worker checks it again). */
async function checkOne(job: Job, schema: StandardSchemaV1): Promise<void> {
  const checked = await checkPayload(schema, job.payload);
  if (!checked.ok) throw new PayloadRefused(job.task, checked.issues);
}

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
