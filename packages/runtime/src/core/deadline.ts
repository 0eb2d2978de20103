import type { AttemptError } from "./job.js";

/**
 * Deadlines (docs/flow-control.md#deadlines): a job given `deadline` or `expiresInMs` (or whose task gives one) that
 * has not started by then never runs and ends `expired`, with the reason recorded as its last error. Two paths end
 * it: the worker that claims it after its deadline (it never starts the handler, and the claim's attempt is given
 * back), and the maintenance sweep for jobs no claim reached in time.
 */

/** The `reason` of an expired job's recorded error. */
export const EXPIRED_REASON = "expired";

export interface DeadlineInit {
  deadline?: Date | string | undefined;
  expiresInMs?: number | undefined;
}

/** The deadline `init` gives (null: none); `what` names the caller in errors. */
export function deadlineOf(init: DeadlineInit, nowMs: number, what: string): Date | null {
  const { deadline, expiresInMs } = init;
  if (deadline === undefined && expiresInMs === undefined) return null;
  if (deadline !== undefined && expiresInMs !== undefined) {
    throw new TypeError(`${what}: give deadline or expiresInMs, not both (jfast docs flow-control#deadlines)`);
  }
  if (expiresInMs !== undefined) {
    if (typeof expiresInMs !== "number" || !Number.isFinite(expiresInMs) || expiresInMs < 0) {
      throw new TypeError(`${what}: expiresInMs must be a number of milliseconds, 0 or more, got ${String(expiresInMs)}`);
    }
    return new Date(nowMs + Math.ceil(expiresInMs));
  }
  const at = new Date(deadline!);
  if (Number.isNaN(at.getTime())) {
    throw new TypeError(`${what}: deadline must be a Date or an ISO 8601 string, got ${JSON.stringify(String(deadline))} (jfast docs flow-control#deadlines)`);
  }
  return at;
}

/** True when `job` has a deadline that has passed: it must not start. */
export function isExpired(job: { expiresAt: Date | null }, nowMs: number = Date.now()): boolean {
  return job.expiresAt !== null && job.expiresAt.getTime() <= nowMs;
}

/** The error an expired job records (`attempt`: the attempts it really had, 0 when it never ran). */
export function expiredError(expiresAt: Date | string, attempt: number, by: "claim" | "sweep"): AttemptError {
  const at = typeof expiresAt === "string" ? expiresAt : expiresAt.toISOString();
  return {
    attempt,
    at: new Date().toISOString(),
    class: "JobExpired",
    message: `not started before its deadline ${at}; ${by === "claim" ? "the claim that reached it late" : "the sweep for jobs no claim reached"} ended it without running`,
    reason: EXPIRED_REASON,
  };
}

/** One loop, no allocation: a batch of plain jobs keeps the statements or script it always had. */
export function hasDeadline(jobs: readonly { expiresAt: Date | null }[]): boolean {
  for (let i = 0; i < jobs.length; i++) if (jobs[i]!.expiresAt !== null) return true;
  return false;
}
