/**
 * What a handler may return instead of plain success: `return snooze(ms)` runs the job again after `ms` without
 * spending an attempt (docs/tasks.md#snoozing). At most `[plugin.queue] max_snoozes` per job.
 */
export class Snooze {
  readonly ms: number;

  constructor(ms: number) {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`snooze(ms) takes a finite number of milliseconds ≥ 0, got ${ms}`);
    this.ms = ms;
  }
}

export function snooze(ms: number): Snooze {
  return new Snooze(ms);
}

/** Why a job that snoozed more than `max_snoozes` times was dead-lettered (its error's `reason`). */
export const TOO_MANY_SNOOZES = "too many snoozes";

/** The reason a running job's `signal` is aborted with when the job is cancelled through the queue. */
export const CANCELLED = "cancelled";
