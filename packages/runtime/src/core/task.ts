import { CorruptJob } from "./corrupt-job.js";
import type { BatchTools, FlowTools } from "./flow-tools.js";
import type { StandardSchemaV1 } from "./payload-schema.js";
import type { Logger } from "./logger.js";
import type { TaskSession } from "./task-session.js";
import type { Job, JobOptions, JobPriority } from "./job.js";
import type { JobLog, JobProgress } from "./job-life.js";
import type { Providers } from "./providers.js";
import type { Fairness, KeyedConcurrency, KeyedRateLimit, OnDead, RateLimit } from "./limits.js";
import type { UniqueState } from "./unique.js";
import type { TaskDebounce } from "./debounce.js";

/** What a handler receives besides its payload. */
export interface TaskTools<TSession = TaskSession | undefined, P = unknown> {
  /** The running app's context: `ctx.require("outbox")` works exactly as in a route. */
  ctx: AppContext;
  job: Job<P>;
  /** Present when the task declares `session: true`: a transaction on the primary database for the job's tenant. */
  session: TSession;
  /** Aborted when the job's timeout passes or the worker shuts down past its grace period. */
  signal: AbortSignal;
  /**
   * Values a middleware hands the handler for this attempt (docs/tasks.md#locals), typed by `JobLocals`.
   * Empty at the start of every attempt.
   */
  locals: Partial<JobLocals>;
  /** In a flow's step: the flow's id, this step's name and the results of the steps it runs after (docs/flows.md). */
  flow?: FlowTools | undefined;
  /** In a batch's onComplete / onSuccess: the batch's counts (docs/flows.md#batches). */
  batch?: BatchTools | undefined;
  /**
   * The job's progress: a number from 0 to 100 or a small JSON object (docs/jobs.md#progress). Kept on the running
   * job (written at most about once a second, the last value always) and shown by `jobs.get`, `jfast jobs show` and
   * the dashboard. Costs nothing when not called.
   */
  progress(value: JobProgress): void;
  /**
   * Writes to the service's logger with the job's context and keeps the line with this attempt, bounded by
   * `[plugin.queue] job_log_lines` and 64 KiB (docs/jobs.md#logs).
   */
  readonly log: JobLog;
}

/**
 * What middleware may put in `tools.locals`, by name, with its type. Declared by the service, like `Providers`:
 *
 *   declare module "@jfast/runtime" {
 *     interface JobLocals { user: User }
 *   }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface JobLocals {}

/**
 * Wraps every attempt's handler (docs/tasks.md#middleware), outermost first, like Sidekiq's server middleware: work
 * before `next()`, after it, around it. `next()` resolves to what the handler (and the middleware inside) returned,
 * which this middleware may return as it is or replace; throwing instead of calling `next()` fails the attempt
 * as the handler throwing would (a `PermanentError` dead-letters it, anything else is retried).
 */
export type JobMiddleware = (job: Job, tools: TaskTools, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * How the worker hands one attempt's cancellation to whoever runs the handler: `signal` is what the handler
 * receives as its own `signal`, and may be made only when first read.
 */
export interface Cancellation {
  readonly signal: AbortSignal;
}

/** A handler; `R` is what it returns (its job's result, docs/tasks.md#results), unknown unless inferred. */
export type TaskHandler<P = unknown, TSession = TaskSession | undefined, R = unknown> = (payload: P, tools: TaskTools<TSession, P>) => R;

export interface TaskOptions<P = unknown> {
  /**
   * A Standard Schema (zod, valibot, arktype …) of the payload (docs/tasks.md#payload-schemas): the payload type is
   * inferred from it; enqueue refuses a payload that does not fit (PAYLOAD_INVALID, nothing written), and a stored
   * job whose payload no longer fits is dead-lettered before its handler runs. The handler gets the schema's output.
   */
  schema?: StandardSchemaV1<unknown, P>;
  /**
   * The named queue its jobs go to (docs/queues.md), declared as `[queues.<name>]` in jfast.toml; default
   * `"default"`. A queue the configuration does not declare stops start-up.
   */
  queue?: string;
  /**
   * The priority of this task's jobs that choose none: 0 (runs first) to 9, default 5. docs/tasks.md#priority
   */
  priority?: JobPriority;
  /** Overrides `[plugin.queue] max_attempts` for this task. */
  maxAttempts?: number;
  /** An attempt running longer than this fails with JobTimeoutError (and is retried). */
  timeoutMs?: number;
  /** Open a transaction on the primary database around the handler: commit on return, rollback on throw. */
  session?: boolean;
  /** Derives the inbox key: once work for a key has committed, redeliveries are skipped. Needs `session`. */
  idempotentOn?(payload: P): string | number;
  /** Base of the exponential backoff between attempts (default from `[plugin.queue] backoff_base`). */
  backoffBaseMs?: number;
  /**
   * Runs the handler off the worker's main thread (docs/tasks.md#isolated-handlers): in a worker thread, or in a
   * child process. For CPU-heavy handlers: they no longer delay the worker's other jobs, a timed-out attempt's
   * isolate is terminated, and a crash fails only that attempt. The handler gets its payload, `job` and `signal`;
   * not `session`, nor the app's providers.
   */
  isolate?: IsolateMode;
  /** Runs the task on a fixed interval counted from the Unix epoch in UTC (needs `[plugin.queue] scheduler = true`). */
  every?: IntervalSpec;
  /** Runs the task on a five-field cron expression, read in `timezone` (UTC by default). */
  cron?: string;
  /** A zoneinfo name for `cron`, e.g. "America/Mexico_City". */
  timezone?: string;
  /** After downtime, fire the most recent missed tick once (default true); false skips it too. */
  catchUp?: boolean;
  /** The payload of every scheduled job; `scheduled_for` (the tick, ISO-8601 UTC) is added to it. */
  payload?: Record<string, unknown>;
  /**
   * Every job of this task is unique (docs/tasks.md#unique-jobs): not added while another of its task and tenant
   * holds its key. `key` derives the key from the payload (default: the payload's JSON, keys sorted).
   */
  unique?: TaskUnique<P>;
  /**
   * At most this many of its jobs run at once, across every worker and process of its queue (docs/tasks.md#limits).
   * A job over the limit waits without spending an attempt; other tasks' jobs are claimed past it.
   * `{ key, limit }`: at most `limit` jobs with one key (computed from each job at enqueue) run at once, and a key
   * at its limit never holds jobs of other keys (docs/flow-control.md#per-key-concurrency).
   */
  concurrency?: number | KeyedConcurrency<P>;
  /**
   * At most `max` of its jobs start in any `perMs` milliseconds, across every worker and process (docs/tasks.md#limits).
   * With `key`: at most `max` starts per key (docs/flow-control.md#per-key-rate-limits).
   */
  rateLimit?: RateLimit | KeyedRateLimit<P>;
  /**
   * The default deadline of its jobs (a job's own `deadline` / `expiresInMs` wins): a job not started by then never
   * runs and ends `expired` (docs/flow-control.md#deadlines). `expiresInMs` counts from each job's enqueue.
   */
  deadline?: Date | string;
  expiresInMs?: number;
  /**
   * Jobs of one key enqueued while one of them waits become that one job: the latest payload, its start `delayMs`
   * after the latest enqueue, at most `maxWaitMs` after the first (docs/flow-control.md#debounce).
   */
  debounce?: TaskDebounce<P>;
  /**
   * Fair share across keys (docs/flow-control.md#fair-share-across-keys): its due jobs are claimed round robin
   * across keys (the tenant, or `key`), weighted by `weights`, so a key with a large backlog cannot starve others.
   */
  fairness?: Fairness<P>;
  /**
   * Order per key (docs/flow-control.md#order-per-key): jobs with one key run one at a time, in enqueue order, a
   * failing job holding its key's next ones until it completes or dies. Other keys are not held.
   */
  orderedBy?(payload: P): string;
  /** With `orderedBy`: a dead job keeps holding its key's next jobs until retried or skipped ("block", the default), or not ("skip"). */
  onDead?: OnDead;
  /**
   * Stores its payload and its errors' messages and stacks encrypted (AES-256-GCM) on every backend and in the
   * outbox, with the keys of JFAST_ENCRYPTION_KEYS; the handler sees the plaintext (docs/tasks.md#encryption).
   */
  encrypt?: boolean;
}

/** Where an isolated handler runs: a worker thread of the worker's process, or a child process of its own. */
export type IsolateMode = "thread" | "process";

/** A task's `unique` option; a job's own `unique` overrides the key, and its periodMs or states if it gives them. */
export interface TaskUnique<P = unknown> {
  key?(payload: P): string;
  /** Holds the key this long after the first job's enqueue, whatever becomes of that job. */
  periodMs?: number;
  /** Holds the key while the job is in one of these (default ready or running); not with periodMs. */
  states?: readonly UniqueState[];
}

/** A duration for `every`: the units add up (`{ hours: 1, minutes: 30 }`). */
export interface IntervalSpec {
  days?: number;
  hours?: number;
  minutes?: number;
  seconds?: number;
  milliseconds?: number;
}

/** `tasks.schedule(task, options)`: a schedule for a task declared elsewhere, or a second schedule of one task. */
export interface ScheduleOptions {
  cron?: string;
  every?: IntervalSpec;
  timezone?: string;
  /** Ticks are claimed under this name (default: the task's name); renaming a schedule makes it new. */
  name?: string;
  payload?: Record<string, unknown>;
  catchUp?: boolean;
}

export interface ScheduleDeclaration {
  readonly task: string;
  readonly options: ScheduleOptions;
}

export interface TaskDefinition<P = unknown> {
  /** "subscriber": declared by `subscribe(type, ...)`; its payload is the event's wire form. */
  readonly kind: "task" | "subscriber";
  readonly name: string;
  readonly options: TaskOptions<P>;
  // Method syntax on purpose: a definition of a specific payload still fits where any definition is taken
  // (the registry, the worker), which calls it with the stored payload.
  handler(payload: P, tools: TaskTools<TaskSession | undefined, P>): unknown;
  /** The module whose tasks file declared it; null when declared elsewhere (tests, the registry form). */
  module: string | null;
  /** The file that declared it, when known. */
  file: string | null;
}

/**
 * What `task(...)` returns: the definition, and the way to make its jobs with a checked payload. `R` is its
 * handler's result once awaited (what a later flow step reads of it: `defineFlow`, docs/flows.md#typed-flows).
 */
export interface Task<P = unknown, R = unknown, In = P> extends TaskDefinition<P> {
  handler(payload: P, tools: TaskTools<TaskSession | undefined, P>): R | Promise<R>;
  /**
   * A job of this task: `sendEmail.job({ invoice_id }, { tenantId })`. Enqueue it like any other. With a `schema`,
   * it takes the schema's input (`In`) and the handler gets its output (`P`).
   */
  job(payload: In, options?: JobOptions): Job<In>;
}

/** The app seen from a handler or a route. */
export interface AppContext {
  readonly serviceName: string;
  /** The service's logger (set by createJfast): lines written inside a handler carry its tenant, request, job id, task and attempt. */
  readonly logger?: Logger;
  /** A started provider by name, typed by `Providers`; throws naming the plugin to enable. */
  require<K extends keyof Providers>(name: K): Providers[K];
  /** @deprecated the name alone gives the type: `require("queue")`; declare your own providers in `Providers`. */
  require<T>(name: keyof Providers): T;
}

const TASK_NAME = /^[a-z0-9_]+(\.[a-zA-Z0-9_\-]+)+$/;
/** `<event type>-><module>.<function>`: a subscriber's task name ("receipt.registered->alert.checkBudget"). */
export const SUBSCRIBER_TASK_NAME = /^[a-z0-9_]+(\.[a-z0-9_]+)+->[a-z0-9_]+\.[A-Za-z_][A-Za-z0-9_]*$/;

export function validateTaskName(name: string): string | null {
  if (name === CorruptJob.task) return `task name "${name}" is reserved for the dead letters of jobs that cannot be read`;
  if (name.includes("->")) {
    return SUBSCRIBER_TASK_NAME.test(name)
      ? null
      : `subscriber name "${name}" must be "<event type>-><module>.<function>", e.g. "receipt.registered->alert.checkBudget"`;
  }
  if (!TASK_NAME.test(name)) {
    return `task name "${name}" must be "<module>.<action>" in lower case, e.g. "invoice.send_email"`;
  }
  return null;
}
