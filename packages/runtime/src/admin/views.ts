import type { AttemptError } from "../core/job.js";
import type { AttemptInfo, JobLogLine, JobProgress } from "../core/job-life.js";
import type { DeadJob, JobInfo } from "../core/queue-backend.js";
import type { JobState } from "../core/job-state.js";
import type { JobUnique } from "../core/unique.js";
import type { RateLimit } from "../core/limits.js";
import { errorGroup } from "./dead-scan.js";
import type { RetryMark } from "./retry-marks.js";
import type { Redaction } from "./redact.js";
import { traceIdOf } from "../observability/trace-id.js";

/**
 * A dead letter as deadLetters.list shows it: the error that killed it (class and message, no stack). Every
 * attempt's error with its stack comes from jobs.get, one job at a time: a page of 100 rows with every stack
 * was ~370 KB, re-read on every change by each open dashboard.
 */
export interface DeadLetterView {
  id: string;
  task: string;
  /** 0 runs first, 9 last (docs/tasks.md#priority). */
  priority: number;
  tenantId: string | null;
  requestId: string | null;
  attempts: number;
  maxAttempts: number | null;
  createdAt: string;
  diedAt: string;
  lastError: LastErrorView | null;
  group: string;
  /** From the job's traceparent: the trace of the request that caused it (search your tracing UI by it). */
  traceId: string | null;
  payload: unknown;
}

/** The last attempt's error without its stack (jobs.get has every attempt's, with stacks). */
export type LastErrorView = Omit<AttemptError, "stack">;

export interface JobView {
  id: string;
  task: string;
  state: JobState;
  /** 0 runs first, 9 last (docs/tasks.md#priority). */
  priority: number;
  tenantId: string | null;
  requestId: string | null;
  traceparent: string | null;
  /** The trace id inside `traceparent`. */
  traceId: string | null;
  attempts: number;
  maxAttempts: number | null;
  createdAt: string;
  availableAt: string;
  diedAt: string | null;
  lockedBy: string | null;
  lockedUntil: string | null;
  timeoutMs: number | null;
  /** A unique job's key, shown as `sha256:<12 hex>` (a key derived from the payload carries its values), and how it holds it; null for a plain job. */
  unique: JobUnique | null;
  /** The limits of its task (docs/tasks.md#limits); null when the task has none or is not this service's. */
  limit: JobLimitView | null;
  errors: AttemptError[];
  payload: unknown;
  /** `tools.progress` (docs/jobs.md#progress): the running job's last written value, or a finished one's last; null: none. */
  progress: JobProgress | null;
  /** When it was enqueued, and how long it waited from available to its first start (null before it started). */
  enqueuedAt: string;
  waitMs: number | null;
  /** A finished job's last attempt: when it ended and how long it ran; null while it has not finished one. */
  finishedAt: string | null;
  durationMs: number | null;
}

/** One job as `jobs.get` shows it: with where operators retried it among its attempts. */
export interface JobDetailView extends JobView {
  /** Oldest first; each says how many of `errors` came before it. */
  retries: RetryMark[];
  /** A completed job's result (docs/tasks.md#results), redacted as its payload is; absent when none was stored. */
  result?: unknown;
  /** Why a completed job's result was not stored (too large, not JSON). */
  resultOmitted?: string;
  /**
   * Every attempt, oldest first: timing, worker, outcome, error, progress and log lines (docs/jobs.md#timing). The
   * backend's `JobInfo.attempts`; named so here because `attempts` counts them.
   */
  attemptDetails: AttemptInfo[];
  /** The last attempt's log lines (`tools.log`); each attempt's are in `attempts[].logs`. */
  logs: JobLogLine[];
}

export interface JobLimitView {
  concurrency: number | null;
  rateLimit: RateLimit | null;
  /** For a waiting job whose task is at a limit: what it waits on ("concurrency 5 of billing.charge: 5 running"). */
  waitsOn: string | null;
}

export function deadLetterView(dead: DeadJob, redaction: Redaction): DeadLetterView {
  const job = redaction.job(dead.job);
  const lastError = redaction.error(dead.lastError, dead.job);
  return {
    id: job.id,
    task: job.task,
    priority: job.priority,
    tenantId: job.tenantId,
    requestId: job.requestId,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    createdAt: job.createdAt,
    diedAt: dead.diedAt,
    lastError: lastError && withoutStack(lastError),
    group: errorGroup(lastError).key,
    traceId: traceIdOf(job.trace?.traceparent),
    payload: job.payload,
  };
}

export function jobView(info: JobInfo, redaction: Redaction): JobView {
  const job = redaction.job(info.job);
  return {
    id: job.id,
    task: job.task,
    state: info.state,
    priority: job.priority,
    tenantId: job.tenantId,
    requestId: job.requestId,
    traceparent: job.trace?.traceparent ?? null,
    traceId: traceIdOf(job.trace?.traceparent),
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    createdAt: job.createdAt,
    availableAt: job.availableAt,
    diedAt: info.diedAt,
    lockedBy: info.lockedBy,
    lockedUntil: info.lockedUntil,
    timeoutMs: job.timeoutMs,
    unique: job.unique ?? null,
    limit: null,
    errors: job.errors,
    payload: job.payload,
    progress: info.progress === undefined ? null : (redaction.payload(info.progress) as JobProgress),
    enqueuedAt: info.enqueuedAt ?? job.createdAt,
    waitMs: info.waitMs ?? null,
    finishedAt: info.finishedAt ?? null,
    durationMs: info.durationMs ?? null,
  };
}

/**
 * jobs.get's attempts and log lines, redacted as the payload is: a line's fields by name, its message and an
 * attempt's error for the payload's hidden values.
 */
export function attemptsView(info: JobInfo, redaction: Redaction): Pick<JobDetailView, "attemptDetails" | "logs"> {
  const values = redaction.values(info.job.payload);
  const line = (l: JobLogLine): JobLogLine => {
    const shown: JobLogLine = { at: l.at, level: l.level, message: redaction.text(l.message, values) };
    if (l.fields !== undefined) shown.fields = redaction.payload(l.fields) as Record<string, unknown>;
    return shown;
  };
  const attempts = (info.attempts ?? []).map((a): AttemptInfo => {
    const shown: AttemptInfo = { ...a, logs: a.logs.map(line) };
    if (a.error) shown.error = redaction.error(a.error, info.job) ?? undefined;
    if (a.progress !== undefined) shown.progress = redaction.payload(a.progress) as JobProgress;
    return shown;
  });
  return { attemptDetails: attempts, logs: attempts.at(-1)?.logs ?? (info.logs ?? []).map(line) };
}

/** jobs.get's result fields: the stored result with the payload's redaction applied, or why none was stored. */
export function resultView(info: JobInfo, redaction: Redaction): Pick<JobDetailView, "result" | "resultOmitted"> {
  if ("result" in info) return { result: redaction.payload(info.result) };
  return info.resultOmitted !== undefined ? { resultOmitted: info.resultOmitted } : {};
}

function withoutStack({ stack: _stack, ...rest }: AttemptError): LastErrorView {
  return rest;
}
