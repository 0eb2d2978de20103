import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { listStateOf } from "../../core/job-listing.js";
import { ListOrder, ListState, type Depths, type JobActionResult, type ListJobsParams } from "../../core/queue-backend.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { auditedCall } from "../audit-call.js";
import { requireBulkRole } from "../bulk-limit.js";
import { backendCall, requireQueue } from "../queue-access.js";
import { act, deleteWaitingJob, JobAction, runJobNow } from "../operations/job-actions.js";
import { operatorProcedure, viewerProcedure } from "../trpc.js";
import { jobView, type JobView } from "../views.js";

const text = z.string().min(1).max(200);
const states = [ListState.ready, ListState.scheduled, ListState.running, ListState.completed, ListState.dead, ListState.cancelled, ListState.expired] as const;

const listInput = z.strictObject({
  state: z.enum(states),
  order: z.enum([ListOrder.newest, ListOrder.oldest]).default(ListOrder.newest),
  task: text.optional(),
  tenantId: text.optional(),
  /** An exact job id. */
  id: text.optional(),
  after: z.string().min(1).max(1000).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export { JobAction };
/** The states each single-job action acts on. */
const ACTS_ON: Record<JobAction, readonly ListState[]> = {
  cancel: [ListState.ready, ListState.scheduled, ListState.running],
  runNow: [ListState.scheduled],
  delete: [ListState.ready, ListState.scheduled],
};

/** Jobs a bulk action reads and acts on at most per call; the preview counts as far. */
export const BULK_LIMIT = 1000;

const bulkInput = z.strictObject({
  action: z.enum([JobAction.cancel, JobAction.runNow, JobAction.delete]),
  state: z.enum([ListState.ready, ListState.scheduled, ListState.running]),
  task: text.optional(),
  tenantId: text.optional(),
});

export interface JobListView {
  enabled: boolean;
  /** False where the backend cannot list this state; `reason` says why (RabbitMQ's waiting messages). */
  supported: boolean;
  reason: string | null;
  items: JobView[];
  /** Pass back as `after` for the next page; a page may be short while this is not null. */
  next: string | null;
  /** False where pages are positions a moving queue shifts (Redis's ready list). */
  exact: boolean;
  /** The queue's depths, the counts of the tabs (cheap: docs/admin-api.md#listing-jobs); null without a queue. */
  counts: Depths | null;
  /** The actions the caller's backend offers on jobs of this state. */
  actions: JobAction[];
}

export const jobListingProcedures = {
  /** One page of jobs in a state, newest or oldest first, filtered (docs/admin-api.md#listing-jobs). */
  list: viewerProcedure.input(listInput).query(async ({ ctx, input }): Promise<JobListView> => {
    const queue = ctx.sources.queue();
    const empty = { items: [], next: null, exact: true, counts: null, actions: [] };
    if (!queue) return { enabled: false, supported: false, reason: null, ...empty };
    const counts = await backendCall(queue, "counting jobs", () => queue.depths());
    const actions = (Object.keys(ACTS_ON) as JobAction[]).filter((a) => ACTS_ON[a].includes(input.state) && (queue.backend.capabilities.jobActions || a === JobAction.cancel));
    const page = await listing(queue, input);
    if (typeof page === "string") return { enabled: true, supported: false, reason: page, ...empty, counts, actions: [] };
    return { enabled: true, supported: true, reason: null, items: page.rows.map((r) => jobView(r, ctx.sources.redaction)), next: page.next, exact: page.exact, counts, actions };
  }),

  /** Makes a scheduled job (delayed, backing off, snoozed) due now. Audited. */
  runNow: operatorProcedure.input(z.strictObject({ id: text })).mutation(async ({ ctx, input }) => oneJob(await runJobNow(ctx, input.id), input.id)),

  /** Deletes a waiting (ready or scheduled) job for good. Audited. */
  delete: operatorProcedure.input(z.strictObject({ id: text })).mutation(async ({ ctx, input }) => oneJob(await deleteWaitingJob(ctx, input.id), input.id)),

  /** How many jobs a bulk action with this filter would act on, counted as the action would read them. */
  bulkPreview: viewerProcedure.input(bulkInput).query(async ({ ctx, input }) => {
    const queue = requireQueue(ctx.sources);
    const ids = await matching(queue, input);
    return { count: ids.length, capped: ids.length >= BULK_LIMIT, limit: BULK_LIMIT };
  }),

  /** Cancels, runs now or deletes every job of a state matching the filter, at most BULK_LIMIT per call. Audited. */
  bulk: operatorProcedure.input(bulkInput).mutation(async ({ ctx, input }) => {
    requireBulkRole(ctx.principal, `jobs.bulk (${input.action})`);
    const queue = requireQueue(ctx.sources);
    const filter = { state: input.state, ...(input.task ? { task: input.task } : {}), ...(input.tenantId ? { tenantId: input.tenantId } : {}) };
    return auditedCall(
      ctx,
      { action: `jobs.bulk.${input.action}`, ids: [], filter },
      async () => {
        const ids = await matching(queue, input);
        const done: string[] = [];
        for (const id of ids) if ((await act(queue, input.action, id)).done) done.push(id);
        return { done, skipped: ids.length - done.length, capped: ids.length >= BULK_LIMIT };
      },
      (r) => ({ done: r.done.length, skipped: r.skipped, capped: r.capped }),
      (r) => r.done,
    ).then((r) => ({ done: r.done.length, skipped: r.skipped, capped: r.capped }));
  }),
};

/** A page, or the backend's reason when it cannot list the state. */
async function listing(queue: QueueProvider, input: z.infer<typeof listInput>) {
  const params: ListJobsParams = { state: input.state, order: input.order, task: input.task, tenantId: input.tenantId, id: input.id, after: input.after, limit: input.limit };
  try {
    return await queue.backend.listJobs(params);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "NOT_SUPPORTED") return (error as Error).message.split("\n")[0]!;
    if (code === "CURSOR_INVALID") throw new TRPCError({ code: "BAD_REQUEST", message: (error as Error).message.split("\n")[0]!, cause: error });
    return backendCall(queue, "listing jobs", () => Promise.reject(error));
  }
}

/** Ids of the jobs a bulk action acts on: pages of the listing until BULK_LIMIT or the end. */
async function matching(queue: QueueProvider, input: z.infer<typeof bulkInput>): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  do {
    const page = await listing(queue, { ...input, order: ListOrder.oldest, limit: 200, after });
    if (typeof page === "string") throw new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: page });
    ids.push(...page.rows.filter((r) => listStateOf(r) === input.state).map((r) => r.job.id));
    after = page.next ?? undefined;
  } while (after && ids.length < BULK_LIMIT);
  return ids.slice(0, BULK_LIMIT);
}

function oneJob(result: JobActionResult, id: string): JobActionResult & { id: string } {
  if (!result.done && result.state === null) throw new TRPCError({ code: "NOT_FOUND", message: `no job with id ${id}` });
  return { id, ...result };
}
