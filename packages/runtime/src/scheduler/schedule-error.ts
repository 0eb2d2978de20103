import type { ErrorCode } from "../errors/codes.js";
import { JfastError } from "../errors/jfast-error.js";

/** What the cron parser accepts, repeated in every syntax error so the fix is in the message. */
export const CRON_ACCEPTED =
  'five fields "minute hour day-of-month month day-of-week" using *, lists (1,15), ranges (1-5), steps (*/10, 0-30/5), ' +
  "month names (jan-dec), day names (sun-sat), or one of @hourly @daily @weekly @monthly @yearly";

/**
 * A schedule that cannot run as declared: an invalid cron expression, an unknown time zone, an interval that
 * is not a positive duration. Raised at declaration or start-up, and by `jfast schedule next` (exit 2).
 */
export class ScheduleError extends JfastError {
  constructor(message: string, options: { code?: ErrorCode; hint?: string; cause?: unknown } = {}) {
    super(message, {
      code: options.code ?? "SCHEDULE_INVALID",
      docs: "jfast docs scheduler",
      ...(options.hint ? { hint: options.hint } : {}),
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.name = "ScheduleError";
  }
}

export function cronError(expression: string, problem: string): ScheduleError {
  return new ScheduleError(`cron "${expression}": ${problem}`, { code: "CRON_INVALID", hint: `write ${CRON_ACCEPTED}` });
}
