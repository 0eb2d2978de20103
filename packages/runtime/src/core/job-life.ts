import type { AttemptError } from "./job.js";

/**
 * A job's life as it is kept beside the job (docs/jobs.md): each attempt's timing, worker and outcome, with its
 * progress and the lines its handler logged. Backends store `AttemptRun`s (times in epoch ms, compact); the admin
 * views turn them into `AttemptInfo`s with `attemptsInfo`.
 */

/** `tools.progress(value)`: a number from 0 to 100, or a small JSON object (at most MAX_PROGRESS_BYTES). */
export type JobProgress = number | { readonly [key: string]: unknown };

export const JobLogLevel = { info: "info", warn: "warn", error: "error" } as const;
export type JobLogLevel = (typeof JobLogLevel)[keyof typeof JobLogLevel];

/** One line a handler logged through `tools.log`, kept with its attempt. */
export interface JobLogLine {
  /** ISO-8601. */
  at: string;
  level: JobLogLevel;
  message: string;
  fields?: Record<string, unknown>;
}

/** `tools.log`: writes to the service's logger with the job's context, and keeps the line with the attempt. */
export interface JobLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** How an attempt ended. */
export const AttemptOutcome = { completed: "completed", failed: "failed", dead: "dead", snoozed: "snoozed" } as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

/** One attempt as a backend stores it, written with the attempt's outcome (no write of its own). */
export interface AttemptRun {
  attempt: number;
  /** Epoch ms, the worker's clock, when the handler started. */
  startedAt: number;
  durationMs: number;
  workerId: string;
  outcome: AttemptOutcome;
  /** First attempt only: from the job's availability to this start. */
  waitMs?: number;
  /** The last value `tools.progress` was given in this attempt. */
  progress?: JobProgress;
  logs?: JobLogLine[];
  /** Lines logged past the bounds (`[plugin.queue] job_log_lines`, LOG_BYTES_PER_ATTEMPT): counted, not kept. */
  logsDropped?: number;
}

/** One attempt as the admin API shows it (`JobInfo.attempts`). */
export interface AttemptInfo {
  attempt: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  workerId: string;
  outcome: AttemptOutcome;
  /** The attempt's error (failed or dead), from the job's errors. */
  error?: AttemptError;
  progress?: JobProgress;
  logs: JobLogLine[];
  logsDropped?: number;
}

/** `[plugin.queue] job_log_lines` when not set. */
export const DEFAULT_JOB_LOG_LINES = 200;
/** What one attempt keeps of its log lines at most, in bytes of JSON; the rest is counted. */
export const LOG_BYTES_PER_ATTEMPT = 64 * 1024;
/** A progress object larger than this (JSON) is refused at `tools.progress`. */
export const MAX_PROGRESS_BYTES = 4 * 1024;
/** How often a running job's progress is written at most. */
export const PROGRESS_WRITE_MS = 1000;
/** Attempts kept per job; older ones are dropped first (a job retried from dead letters many times). */
export const MAX_RUNS_KEPT = 50;

/** Null when `value` can be a job's progress, else why not. */
export function progressProblem(value: unknown): string | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 && value <= 100 ? null : `a number must be from 0 to 100, got ${value}`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `give a number from 0 to 100 or a JSON object, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`;
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return `the object is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > MAX_PROGRESS_BYTES ? `the object is ${bytes} bytes of JSON, more than ${MAX_PROGRESS_BYTES}` : null;
}

/** The admin view of stored attempts: ISO times, each failed attempt's error joined from the job's errors. */
export function attemptsInfo(runs: readonly AttemptRun[] | null | undefined, errors: readonly AttemptError[]): AttemptInfo[] {
  if (!runs || runs.length === 0) return [];
  const used = new Set<AttemptError>();
  return runs.map((run) => {
    const info: AttemptInfo = {
      attempt: run.attempt,
      startedAt: new Date(run.startedAt).toISOString(),
      finishedAt: new Date(run.startedAt + run.durationMs).toISOString(),
      durationMs: run.durationMs,
      workerId: run.workerId,
      outcome: run.outcome,
      logs: run.logs ?? [],
    };
    if (run.outcome === AttemptOutcome.failed || run.outcome === AttemptOutcome.dead) {
      // The latest error of that attempt number not already given to an earlier run (attempts restart after a retry from dead).
      const error = errors.find((e) => e.attempt === run.attempt && !used.has(e) && Date.parse(e.at) >= run.startedAt - 1000);
      if (error) {
        used.add(error);
        info.error = error;
      }
    }
    if (run.progress !== undefined) info.progress = run.progress;
    if (run.logsDropped) info.logsDropped = run.logsDropped;
    return info;
  });
}

/** Stored runs as read back from a backend's text (a JSON array); unreadable text reads as none. */
export function parseRuns(text: string | null | undefined): AttemptRun[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as AttemptRun[]) : [];
  } catch {
    return [];
  }
}

/** A stored progress as read back from a backend's text; unreadable text reads as none. */
export function parseProgress(text: string | null | undefined): JobProgress | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as JobProgress;
  } catch {
    return null;
  }
}

/** `runs` with `run` added, at most MAX_RUNS_KEPT (the oldest dropped). */
export function withRun(runs: readonly AttemptRun[] | undefined, run: AttemptRun): AttemptRun[] {
  const all = runs ? [...runs, run] : [run];
  return all.length > MAX_RUNS_KEPT ? all.slice(all.length - MAX_RUNS_KEPT) : all;
}

/**
 * A flow step's timing for flows.get (docs/flows.md): its last attempt's start and duration, from its record; empty
 * where none was kept (not run yet, or RabbitMQ's flow store).
 */
export function stepTiming(last: AttemptRun | null | undefined): { startedAt?: string; durationMs?: number } {
  if (!last || typeof last.startedAt !== "number") return {};
  return { startedAt: new Date(last.startedAt).toISOString(), durationMs: last.durationMs };
}

/** What `JobInfo` shows of a job's life, from its stored runs and (while it runs) its stored progress. */
export interface JobLifeFields {
  attempts: AttemptInfo[];
  logs: JobLogLine[];
  enqueuedAt: string;
  waitMs: number | null;
  progress?: JobProgress;
  durationMs?: number;
  finishedAt?: string;
}

export function jobLifeFields(params: {
  runs: readonly AttemptRun[] | null | undefined;
  errors: readonly AttemptError[];
  createdAt: string;
  running: boolean;
  /** The progress written while the job runs (null: none). */
  progress: JobProgress | null | undefined;
}): JobLifeFields {
  const attempts = attemptsInfo(params.runs, params.errors);
  const last = attempts.at(-1);
  const first = params.runs?.find((r) => r.waitMs !== undefined);
  const fields: JobLifeFields = {
    attempts,
    logs: last?.logs ?? [],
    enqueuedAt: params.createdAt,
    waitMs: first?.waitMs ?? null,
  };
  const progress = params.running ? (params.progress ?? undefined) : (last?.progress ?? params.progress ?? undefined);
  if (progress !== undefined) fields.progress = progress;
  if (last && !params.running) {
    fields.durationMs = last.durationMs;
    fields.finishedAt = last.finishedAt;
  }
  return fields;
}
