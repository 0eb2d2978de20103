import { currentContext } from "./ambient-context.js";
import { JfastError } from "../errors/jfast-error.js";
import { newJobId } from "./job-id.js";
import { assertStorable, assertStorableText, recordableText } from "./storable.js";
import type { JobFlow } from "./flow.js";
import type { AttemptRun } from "./job-life.js";
import { normalizeUnique, type JobUnique, type UniqueInit } from "./unique.js";
import { deadlineOf } from "./deadline.js";
import type { JobDebounce } from "./debounce.js";

/** One failed attempt, as recorded on the job: `ValueError: card declined` style class and message, plus stack. */
export interface AttemptError {
  attempt: number;
  at: string;
  class: string;
  message: string;
  stack?: string | undefined;
  /** Why the attempt ended when the handler did not throw: "worker lost", "unknown task", "timeout". */
  reason?: string | undefined;
}

export interface TraceContext {
  traceparent: string;
  tracestate?: string | undefined;
}

/**
 * The wire form of a job. Every backend stores exactly this and gives it back unchanged
 * (backends add their own bookkeeping next to it: state, lease, time of death).
 */
export interface JobJSON {
  id: string;
  task: string;
  /** 0 (runs first) to 9; DEFAULT_PRIORITY unless chosen. */
  priority: number;
  payload: unknown;
  attempts: number;
  maxAttempts: number | null;
  availableAt: string;
  createdAt: string;
  tenantId: string | null;
  requestId: string | null;
  trace: TraceContext | null;
  errors: AttemptError[];
  timeoutMs: number | null;
  /** Present on a unique job only (docs/tasks.md#unique-jobs). */
  unique?: JobUnique;
  /** Present on a step of a flow or batch only (docs/flows.md). */
  flow?: JobFlow;
  /** Present on a job with a deadline only: not started by then, it never runs and ends `expired` (docs/flow-control.md#deadlines). */
  expiresAt?: string;
  /** Present on a job of a task with `debounce` only, until it is stored (docs/flow-control.md#debounce). */
  debounce?: JobDebounce;
  /**
   * Its attempts' records (core/job-life.ts), where the job travels as one message (RabbitMQ: a retried message and
   * a dead letter carry them). The other backends keep them beside the job and leave this out.
   */
  runs?: AttemptRun[];
  /** Present on a job of a task with `concurrency: { key, limit }` only (docs/flow-control.md). */
  limitKey?: string;
}

export interface JobInit<P = unknown> {
  task: string;
  payload?: P;
  id?: string;
  /** Defaults to the task's `maxAttempts`, else `[plugin.queue] max_attempts`. */
  maxAttempts?: number;
  /** A job is not claimed before this time. */
  availableAt?: Date | string;
  /** Alternative to `availableAt`: run no sooner than this many milliseconds from now. */
  delayMs?: number;
  /** Outside a request, a job has no tenant unless given one. */
  tenantId?: string | null;
  requestId?: string | null;
  trace?: TraceContext | null;
  timeoutMs?: number | null;
  /**
   * An integer from 0 to 9: among due jobs, a lower number is claimed first (as in Oban and graphile-worker).
   * Defaults to the task's `priority` option, else 5. docs/tasks.md#priority
   */
  priority?: JobPriority;
  /** Not added while another job of its task and tenant holds `key` (docs/tasks.md#unique-jobs). */
  unique?: UniqueInit;
  /** Not started by this time, the job never runs and ends `expired` (docs/flow-control.md#deadlines). */
  deadline?: Date | string;
  /** Alternative to `deadline`: this many milliseconds from now. */
  expiresInMs?: number;
}

/** A job's priority: 0 runs first, 9 last. */
export type JobPriority = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;

/** The priority of a job that chose none and whose task has none. */
export const DEFAULT_PRIORITY: JobPriority = 5;
export const MIN_PRIORITY = 0;
export const MAX_PRIORITY = 9;

/** Null when `value` is a valid priority, else why not (shared by `new Job` and `task(name, { priority })`). */
export function priorityProblem(value: unknown): string | null {
  if (typeof value === "number" && Number.isInteger(value) && value >= MIN_PRIORITY && value <= MAX_PRIORITY) return null;
  return `priority must be a whole number from ${MIN_PRIORITY} (runs first) to ${MAX_PRIORITY}, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`;
}

export function invalidPriority(where: string, value: unknown): JfastError {
  return new JfastError(`${where}: ${priorityProblem(value)}`, {
    code: "PRIORITY_INVALID",
    hint: `pass an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}, lower runs first; leave it out for the task's priority (default ${DEFAULT_PRIORITY})`,
    docs: "jfast docs tasks#priority",
  });
}

/** True for a job made without a priority (not one restored from a backend, which keeps its own). */
export function isPriorityDefaulted(job: Job): boolean {
  return hasMark(job, PRIORITY_DEFAULTED);
}

/** What `task(payload, options)` takes besides the payload: everything of `new Job` but the task and payload. */
export type JobOptions = Omit<JobInit, "task" | "payload">;

/** A stored job's fields while Job.restore() runs the constructor for them, else null. */
let restoring: RestoredFields | null = null;

type RestoredFields = Omit<JobJSON, "availableAt" | "createdAt"> & { availableAt: Date; createdAt: Date };

/** What Job.restore() passes the constructor; the fields themselves come from `restoring`. */
const RESTORE_INIT: JobInit = { task: "(restored)" };

/*
 * What a Job knows of its own making, as bits of a private field (bookkeeping every job of a bulk enqueue pays for:
 * two WeakSets cost about half a microsecond a job and work for the garbage collector):
 *  - PRIORITY_DEFAULTED: made by `new Job` without a priority; enqueue gives it its task's `priority` option, if any.
 *  - NEVER_HANDED_OFF: its id was generated here and no backend has been handed it yet (see firstHandOff).
 */
const PRIORITY_DEFAULTED = 1;
const NEVER_HANDED_OFF = 2;
/** Whether `job` carries `mark`; set by Job's static block, the only code that reads its private field. */
let hasMark: (job: Job, mark: number) => boolean;
/** Whether `job` carried `mark`, which it no longer does. */
let takeMark: (job: Job, mark: number) => boolean;

/**
 * True when every job of a batch has an id generated here (UUIDv7, never passed in) and was never handed to
 * a backend: none of those ids can be stored anywhere yet, so a backend may insert them without checking
 * for an existing one. Marks them handed off either way, so a retried enqueue of the same Job objects (after
 * a timeout whose insert did commit) goes the checking way and stays a no-op.
 */
export function firstHandOff(jobs: readonly Job[]): boolean {
  let fresh = true;
  for (const job of jobs) if (!takeMark(job, NEVER_HANDED_OFF)) fresh = false;
  return fresh;
}

/**
 * A job as the worker it goes to gets it from a claim, the attempt counted: its own object, sharing nothing with
 * `json` (a handler that changes its payload, errors or trace changes neither the caller's job nor what a release
 * or a re-route writes). The payload is copied through JSON, as it is stored; the rest is flat. Used for a job
 * handed over in process (QueueBackend.offerSlots) and for a RabbitMQ delivery.
 */
export function claimedJob(json: JobJSON): Job {
  // Rebuilt without new Job's checks (Job.restore): `json` is a job a backend stored, or one decodeJob checked.
  return Job.restore({
    ...json,
    // A job stored before priorities existed has none: the default.
    priority: json.priority ?? DEFAULT_PRIORITY,
    payload: JSON.parse(JSON.stringify(json.payload)) as unknown,
    attempts: json.attempts + 1,
    maxAttempts: json.maxAttempts ?? null,
    availableAt: new Date(json.availableAt),
    createdAt: new Date(json.createdAt),
    tenantId: json.tenantId ?? null,
    requestId: json.requestId ?? null,
    trace: json.trace == null ? null : { ...json.trace },
    errors: json.errors.map((error) => ({ ...error })),
    timeoutMs: json.timeoutMs ?? null,
    limitKey: json.limitKey || undefined,
  });
}

/** A job handed over in process, as its worker would have claimed it (claimedJob): the caller keeps theirs. */
export function claimedCopy(job: Job): Job {
  return claimedJob(job.toJSON());
}

/** A job; `P` is its payload's type when it was made by its task's `job(...)`, else unknown. */
export class Job<P = unknown> {
  readonly id: string;
  readonly task: string;
  /** 0 (runs first) to 9. */
  priority: JobPriority;
  readonly payload: P;
  attempts: number;
  maxAttempts: number | null;
  availableAt: Date;
  readonly createdAt: Date;
  readonly tenantId: string | null;
  readonly requestId: string | null;
  readonly trace: TraceContext | null;
  errors: AttemptError[];
  timeoutMs: number | null;
  /** Filled in from the task's `unique` option when enqueued (QueueProvider.prepare). */
  unique: JobUnique | null;
  /** Its place in a flow or batch (set when the flow is planned, core/flow.ts); null for a job on its own. */
  flow: JobFlow | null;
  /** Its deadline (docs/flow-control.md#deadlines), from its own options or its task's; null: none. */
  expiresAt: Date | null;
  /** Filled in from its task's `debounce` option when enqueued (QueueProvider.prepare); null for the others. */
  debounce: JobDebounce | null;
  /** Its key for `concurrency: { key, limit }`, filled in from its task when enqueued (QueueProvider.prepare). */
  limitKey: string | null;
  /** PRIORITY_DEFAULTED and NEVER_HANDED_OFF (above); 0 for a restored job. */
  #marks = 0;

  static {
    hasMark = (job, mark) => (job.#marks & mark) !== 0;
    takeMark = (job, mark) => {
      const had = (job.#marks & mark) !== 0;
      job.#marks &= ~mark;
      return had;
    };
  }

  constructor(init: JobInit<P>) {
    const stored = restoring;
    if (stored) {
      // The same fields in the same order as below, so that every Job has one shape.
      this.id = stored.id;
      this.task = stored.task;
      this.priority = stored.priority as JobPriority;
      this.payload = (stored.payload ?? {}) as P;
      this.attempts = stored.attempts;
      this.maxAttempts = stored.maxAttempts;
      this.availableAt = stored.availableAt;
      this.createdAt = stored.createdAt;
      this.tenantId = stored.tenantId;
      this.requestId = stored.requestId;
      this.trace = stored.trace;
      this.errors = stored.errors;
      this.timeoutMs = stored.timeoutMs;
      this.unique = stored.unique ?? null;
      this.flow = stored.flow ?? null;
      this.expiresAt = stored.expiresAt === undefined ? null : new Date(stored.expiresAt);
      this.debounce = stored.debounce ?? null;
      this.limitKey = stored.limitKey ?? null;
      return;
    }
    if (!init.task || typeof init.task !== "string") {
      throw new TypeError("new Job({ task }) needs the task's name, e.g. new Job({ task: \"invoice.send_email\", payload })");
    }
    // The request's context fills in what the caller left out (Job.fromJSON passes all three: no lookup).
    const context = init.tenantId === undefined || init.requestId === undefined || init.trace === undefined ? currentContext() : undefined;
    const now = new Date();
    this.id = init.id ?? newJobId(now.getTime());
    this.task = init.task;
    this.priority = init.priority ?? DEFAULT_PRIORITY;
    // No payload is an empty object on the wire, as every backend stores it.
    this.payload = init.payload ?? ({} as P);
    this.attempts = 0;
    this.maxAttempts = init.maxAttempts ?? null;
    this.availableAt =
      init.availableAt !== undefined
        ? new Date(init.availableAt)
        : new Date(now.getTime() + Math.max(0, init.delayMs ?? 0));
    this.createdAt = now;
    this.tenantId = init.tenantId !== undefined ? init.tenantId : (context?.tenantId ?? null);
    this.requestId = init.requestId !== undefined ? init.requestId : (context?.requestId ?? null);
    this.trace =
      init.trace !== undefined
        ? init.trace
        : context?.traceparent
          ? { traceparent: context.traceparent, ...(context.tracestate ? { tracestate: context.tracestate } : {}) }
          : null;
    this.errors = [];
    this.timeoutMs = init.timeoutMs ?? null;
    this.unique = init.unique === undefined ? null : normalizeUnique(init.unique, `new Job({ task: "${this.task}" })`, true);
    this.flow = null;
    this.expiresAt = deadlineOf(init, now.getTime(), `new Job({ task: "${this.task}" })`);
    this.debounce = null;
    this.limitKey = null;
    if (Number.isNaN(this.availableAt.getTime())) {
      throw new TypeError(
        `new Job({ task: "${this.task}" }) got an availableAt that is not a date (${String(init.availableAt ?? init.delayMs)}); pass a Date or an ISO 8601 string, or delayMs as a number of milliseconds`,
      );
    }
    assertStorableText(this.task, `the task name "${this.task.slice(0, 80)}"`);
    if (init.id !== undefined) assertStorableText(this.id, `the id of a "${this.task}" job`);
    assertStorableText(this.tenantId, `the tenant id of a "${this.task}" job`);
    assertStorableText(this.requestId, `the request id of a "${this.task}" job`);
    assertStorable(this.payload, `the payload of a "${this.task}" job`);
    if (init.priority === undefined) this.#marks |= PRIORITY_DEFAULTED;
    else if (priorityProblem(init.priority) !== null) throw invalidPriority(`new Job({ task: "${this.task}" })`, init.priority);
    if (init.id === undefined) this.#marks |= NEVER_HANDED_OFF;
  }

  static fromJSON(json: JobJSON): Job {
    const job = new Job({
      id: json.id,
      task: json.task,
      // A job stored before priorities existed has none: the default.
      priority: (json.priority ?? DEFAULT_PRIORITY) as JobPriority,
      payload: json.payload,
      availableAt: json.availableAt,
      tenantId: json.tenantId,
      requestId: json.requestId,
      trace: json.trace,
      timeoutMs: json.timeoutMs,
      ...(json.maxAttempts === null ? {} : { maxAttempts: json.maxAttempts }),
    });
    job.attempts = json.attempts;
    job.errors = [...json.errors];
    if (json.unique) job.unique = json.unique;
    if (json.flow) job.flow = json.flow;
    if (json.expiresAt !== undefined) job.expiresAt = new Date(json.expiresAt);
    if (json.debounce !== undefined) job.debounce = json.debounce;
    if (json.limitKey) job.limitKey = json.limitKey;
    (job as { createdAt: Date }).createdAt = new Date(json.createdAt);
    return job;
  }

  /**
   * A job as a backend stored it, rebuilt without the checks of `new Job` (it was checked when the job was first
   * enqueued) and without copying its fields: the Job takes the dates and the errors array it is given. Backends
   * call it for every job they claim, so it stays cheap. It goes through the constructor all the same, so every
   * Job has the same shape and property reads on jobs stay fast.
   */
  static restore(fields: RestoredFields): Job {
    restoring = fields;
    try {
      return new Job(RESTORE_INIT);
    } finally {
      restoring = null;
    }
  }

  toJSON(): JobJSON {
    const json: JobJSON = {
      id: this.id,
      task: this.task,
      // Right after the task: the Redis scripts read both from the stored JSON without decoding it (lib.lua).
      priority: this.priority,
      payload: this.payload,
      attempts: this.attempts,
      maxAttempts: this.maxAttempts,
      availableAt: this.availableAt.toISOString(),
      createdAt: this.createdAt.toISOString(),
      tenantId: this.tenantId,
      requestId: this.requestId,
      trace: this.trace,
      errors: this.errors,
      timeoutMs: this.timeoutMs,
    };
    if (this.unique) json.unique = this.unique;
    if (this.flow) json.flow = this.flow;
    if (this.expiresAt !== null) json.expiresAt = this.expiresAt.toISOString();
    if (this.debounce !== null) json.debounce = this.debounce;
    if (this.limitKey !== null) json.limitKey = this.limitKey;
    return json;
  }
}

/** The most of an error's text a job keeps (characters); the rest is cut with a marker. docs/worker.md#what-an-error-records */
export const ERROR_MESSAGE_MAX = 8 * 1024;
export const ERROR_STACK_MAX = 16 * 1024;
const ERROR_CLASS_MAX = 200;

/** What a thrown value says, even when its toString throws (a handler may throw anything). */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

export function errorToAttempt(error: unknown, attempt: number, reason?: string): AttemptError {
  if (error instanceof Error) {
    return {
      attempt,
      at: new Date().toISOString(),
      class: recordableText(safeString(error.name || error.constructor?.name || "Error"), ERROR_CLASS_MAX),
      message: recordableText(safeString(error.message), ERROR_MESSAGE_MAX),
      stack: error.stack === undefined ? undefined : recordableText(safeString(error.stack), ERROR_STACK_MAX),
      ...(reason ? { reason } : {}),
    };
  }
  return { attempt, at: new Date().toISOString(), class: typeof error, message: recordableText(safeString(error), ERROR_MESSAGE_MAX), ...(reason ? { reason } : {}) };
}
