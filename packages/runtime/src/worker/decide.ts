import { backoffDelayMs } from "../core/backoff.js";
import { errorToAttempt, type AttemptError, type Job } from "../core/job.js";
import { Snooze } from "../core/outcome.js";
import type { TaskDefinition } from "../core/task.js";
import { JobTimeoutError } from "../errors/jfast-error.js";
import { PermanentError } from "../errors/permanent-error.js";

/**
 * What becomes of a job after one attempt (docs/worker.md#retries-and-backoff), decided from the attempt alone:
 * no I/O, no clock but `now`. The worker writes the decision (outcome-writer.ts), a completion's `value` as the
 * job's result (core/result.ts); a cancelled attempt never gets here.
 */
export type Decision =
  | { kind: "complete"; value: unknown }
  | { kind: "snooze"; availableAt: Date }
  | { kind: "retry"; error: AttemptError; cause: unknown; availableAt: Date }
  | { kind: "dead"; error: AttemptError; cause?: unknown; why: "unknown task" | "permanent" | "exhausted"; maxAttempts?: number };

export type AttemptResult = { ok: true; value: unknown } | { ok: false; error: unknown };

export function decide(params: {
  job: Job;
  definition: TaskDefinition | undefined;
  result: AttemptResult;
  defaultMaxAttempts: number;
  backoffBaseMs: number;
  now: number;
}): Decision {
  const { job, definition, result, now } = params;
  if (!definition) {
    const error: AttemptError = {
      attempt: job.attempts,
      at: new Date(now).toISOString(),
      class: "UnknownTask",
      message: `no task named "${job.task}" is registered in this service; it was dead-lettered without retrying`,
      reason: "unknown task",
    };
    return { kind: "dead", error, why: "unknown task" };
  }
  if (result.ok) {
    if (result.value instanceof Snooze) return { kind: "snooze", availableAt: new Date(now + result.value.ms) };
    return { kind: "complete", value: result.value };
  }
  const failure = result.error;
  const error = errorToAttempt(failure, job.attempts, failure instanceof JobTimeoutError ? "timeout" : undefined);
  if (failure instanceof PermanentError) return { kind: "dead", error, cause: failure, why: "permanent" };
  const maxAttempts = job.maxAttempts ?? definition.options.maxAttempts ?? params.defaultMaxAttempts;
  if (job.attempts >= maxAttempts) return { kind: "dead", error, cause: failure, why: "exhausted", maxAttempts };
  const baseMs = definition.options.backoffBaseMs ?? params.backoffBaseMs;
  return { kind: "retry", error, cause: failure, availableAt: new Date(now + backoffDelayMs(job.attempts, { baseMs })) };
}
