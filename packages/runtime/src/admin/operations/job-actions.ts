import { TRPCError } from "@trpc/server";
import type { CancelResult, JobActionResult } from "../../core/queue-backend.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { backendCall, requireQueue } from "../queue-access.js";

/** The single-job actions besides retry (deadLetters.retry). */
export const JobAction = { cancel: "cancel", runNow: "runNow", delete: "delete" } as const;
export type JobAction = (typeof JobAction)[keyof typeof JobAction];

/**
 * Cancels a waiting or running job (docs/admin-api.md#cancelling-a-job): the admin API's jobs.cancel and
 * `jfast jobs cancel`, one audit entry (`jobs.cancel`) per job. An unknown id is answered (`state: null`), not
 * thrown: the admin API turns it into NOT_FOUND, the command line into a line on stderr.
 */
export function cancelJob(ctx: OperatorContext, id: string): Promise<CancelResult> {
  const queue = requireQueue(ctx.sources);
  return auditedCall(
    ctx,
    { action: "jobs.cancel", ids: [id], filter: null },
    () =>
      backendCall(queue, "cancelling the job", () => queue.cancel(id)).catch((error: unknown) => {
        const cause = (error as TRPCError).cause as (Error & { code?: unknown }) | undefined;
        if (cause?.code === "NOT_SUPPORTED") throw new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: cause.message, cause });
        throw error;
      }),
    (r) => ({ cancelled: r.cancelled, state: r.state }),
  );
}

/** Makes a scheduled job due now: the admin API's jobs.runNow and `jfast jobs run-now`, one entry per job. */
export function runJobNow(ctx: OperatorContext, id: string): Promise<JobActionResult> {
  const queue = requireQueue(ctx.sources);
  return auditedCall(ctx, { action: "jobs.runNow", ids: [id], filter: null }, () => act(queue, JobAction.runNow, id), (r) => ({ ...r }));
}

/** Deletes a waiting job for good: the admin API's jobs.delete and `jfast jobs delete`, one entry per job. */
export function deleteWaitingJob(ctx: OperatorContext, id: string): Promise<JobActionResult> {
  const queue = requireQueue(ctx.sources);
  return auditedCall(ctx, { action: "jobs.delete", ids: [id], filter: null }, () => act(queue, JobAction.delete, id), (r) => ({ ...r }));
}

/** One action on one job, unaudited: the audited single-job operations above and jobs.bulk (one entry per call). */
export async function act(queue: QueueProvider, action: JobAction, id: string): Promise<JobActionResult> {
  const run = (): Promise<JobActionResult> => {
    if (action === JobAction.cancel) return queue.cancel(id).then((r) => ({ done: r.cancelled, state: r.state }));
    if (action === JobAction.runNow) return queue.backend.runNow({ id });
    return queue.backend.deleteJob({ id });
  };
  try {
    return await run();
  } catch (error) {
    if ((error as { code?: unknown }).code === "NOT_SUPPORTED") {
      throw new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: (error as Error).message.split("\n")[0]!, cause: error });
    }
    return backendCall(queue, `${action} of job ${id}`, () => Promise.reject(error));
  }
}
