import type { Job } from "./job.js";

/** What a handler receives besides its payload. */
export interface TaskTools<TSession = unknown> {
  /** The running app's context: `ctx.require("outbox")` works exactly as in a route. */
  ctx: AppContext;
  job: Job;
  /** Present when the task declares `session: true`: a transaction on the primary database for the job's tenant. */
  session: TSession;
  /** Aborted when the job's timeout passes or the worker shuts down past its grace period. */
  signal: AbortSignal;
}

export type TaskHandler<P = any, TSession = any> = (payload: P, tools: TaskTools<TSession>) => unknown;

export interface TaskOptions<P = any> {
  /** Overrides `[plugin.queue] max_attempts` for this task. */
  maxAttempts?: number;
  /** An attempt running longer than this fails with JobTimeoutError (and is retried). */
  timeoutMs?: number;
  /** Open a transaction on the primary database around the handler: commit on return, rollback on throw. */
  session?: boolean;
  /** Derives the inbox key: once work for a key has committed, redeliveries are skipped. Needs `session`. */
  idempotentOn?: (payload: P) => string | number;
  /** Base of the exponential backoff between attempts (default from `[plugin.queue] backoff_base`). */
  backoffBaseMs?: number;
}

export interface TaskDefinition<P = any> {
  readonly kind: "task";
  readonly name: string;
  readonly options: TaskOptions<P>;
  readonly handler: TaskHandler<P>;
  /** The module whose tasks file declared it; null when declared elsewhere (tests, the registry form). */
  module: string | null;
  /** The file that declared it, when known. */
  file: string | null;
}

/** The app seen from a handler or a route. */
export interface AppContext {
  readonly serviceName: string;
  require<T = unknown>(name: string): T;
}

const TASK_NAME = /^[a-z0-9_]+(\.[a-zA-Z0-9_\-]+)+$/;

export function validateTaskName(name: string): string | null {
  if (!TASK_NAME.test(name)) {
    return `task name "${name}" must be "<module>.<action>" in lower case, e.g. "invoice.send_email"`;
  }
  return null;
}
