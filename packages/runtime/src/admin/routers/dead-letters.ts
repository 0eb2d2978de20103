import { z } from "zod";
import { scanDead, errorGroup, hasFilter, SCAN_BUDGET, SCAN_YIELD_EVERY, yieldToLoop, type DeadFilter } from "../dead-scan.js";
import { takeScan } from "../scan-limit.js";
import { discardDeadLetters, retryDeadLetters } from "../operations/dead-letters.js";
import { retryDeadWithPayload } from "../operations/edit-jobs.js";
import { previewReplay } from "../replay-preview.js";
import { checkIdsPerCall, MAX_IDS_PER_CALL, requireBulkRole } from "../bulk-limit.js";
import { backendCall, requireQueue } from "../queue-access.js";
import { queueInput, queueScope } from "../queue-scope.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";
import { deadLetterView, type DeadLetterView } from "../views.js";
import type { AdminContext } from "../trpc.js";
import type { AdminPrincipal } from "../tokens.js";
import { auditedCall, recordAudit } from "../audit-call.js";
import { MAX_RUNNING_REPLAYS, replaysBusy, type ReplayView } from "../replays.js";
import { TRPCError } from "@trpc/server";
import { offsetCursorSchema } from "../cursors.js";
import type { JfastError } from "../../errors/jfast-error.js";
import type { QueueProvider } from "../../queue/queue-provider.js";

const filterSchema = z
  .strictObject({
    task: z.string().min(1).max(200).optional(),
    tenantId: z.string().min(1).max(200).optional(),
    /** The same as tenantId (every admin view takes `tenant`). */
    tenant: z.string().min(1).max(200).optional(),
    errorText: z.string().min(1).max(200).optional(),
    group: z.string().min(1).max(400).optional(),
  })
  .refine((f) => !f.tenant || !f.tenantId || f.tenant === f.tenantId, { message: "tenant and tenantId name different tenants; give one" })
  .transform(({ tenant, ...rest }): DeadFilter => ({ ...rest, ...(tenant ? { tenantId: tenant } : {}) }))
  .optional();

const idsSchema = z.array(z.string().min(1).max(200)).min(1).max(MAX_IDS_PER_CALL);
/** Cursors are offsets into the newest-first list, opaque to callers, bounded (cursors.ts). */
const cursorSchema = offsetCursorSchema.optional();
/** Bulk requeues go to the backend in slices, so a large replay does not stampede the workers at once. */
const REPLAY_BATCH = 200;

export interface DeadLetterPage {
  enabled: boolean;
  items: DeadLetterView[];
  nextCursor: string | null;
  scanned: number;
  /** The filter stopped reading at the scan budget; follow nextCursor for more. */
  budgetReached: boolean;
}

export interface ErrorGroupView {
  key: string;
  errorClass: string;
  message: string;
  count: number;
  tasks: string[];
  newestDiedAt: string;
  sampleId: string;
}

export const deadLettersRouter = router({
  /** Newest death first, cursor-paginated, filtered by task, tenant, error text or error group. */
  list: viewerProcedure
    .input(z.strictObject({ limit: z.number().int().min(1).max(200).default(50), cursor: cursorSchema, filter: filterSchema, queue: queueInput }).prefault({}))
    .query(async ({ ctx, input }): Promise<DeadLetterPage> => {
      const service = ctx.sources.queue();
      const queue = service && queueScope(service, input.queue);
      if (!queue) return { enabled: false, items: [], nextCursor: null, scanned: 0, budgetReached: false };
      const result = await backendCall(queue, "listing dead letters", () =>
        scanDead(queue.backend, { filter: input.filter, offset: Number(input.cursor ?? 0), want: input.limit, redaction: ctx.sources.redaction }),
      );
      return {
        enabled: true,
        items: result.rows.map((d) => deadLetterView(d, ctx.sources.redaction)),
        nextCursor: result.nextOffset === null ? null : String(result.nextOffset),
        scanned: result.scanned,
        budgetReached: result.budgetReached,
      };
    }),

  /**
   * Dead letters grouped by error class and normalised message (of the error as shown: redacted), over the newest
   * SCAN_BUDGET dead letters. A scan: rate-limited per caller (scan-limit.ts).
   */
  groups: viewerProcedure.input(z.strictObject({ filter: filterSchema, queue: queueInput }).optional()).query(async ({ ctx, input }) => {
    const service = ctx.sources.queue();
    const queue = service && queueScope(service, input?.queue);
    if (!queue) return { enabled: false, groups: [] as ErrorGroupView[], scanned: 0, budgetReached: false };
    takeScan(ctx.sources.scans, ctx.principal, "deadLetters.groups");
    const scan = await backendCall(queue, "grouping dead letters", () =>
      scanDead(queue.backend, { filter: input?.filter, offset: 0, want: SCAN_BUDGET, redaction: ctx.sources.redaction }),
    );
    const groups = new Map<string, ErrorGroupView & { taskSet: Set<string> }>();
    for (let i = 0; i < scan.rows.length; i++) {
      if (i > 0 && i % SCAN_YIELD_EVERY === 0) await yieldToLoop();
      const dead = scan.rows[i]!;
      const group = errorGroup(ctx.sources.redaction.error(dead.lastError, dead.job));
      const existing = groups.get(group.key);
      if (existing) {
        existing.count += 1;
        existing.taskSet.add(dead.job.task);
      } else {
        groups.set(group.key, { ...group, count: 1, tasks: [], taskSet: new Set([dead.job.task]), newestDiedAt: dead.diedAt, sampleId: dead.job.id });
      }
    }
    return {
      enabled: true,
      groups: [...groups.values()]
        .map(({ taskSet, ...g }) => ({ ...g, tasks: [...taskSet].sort() }))
        .sort((a, b) => b.count - a.count || b.newestDiedAt.localeCompare(a.newestDiedAt)),
      scanned: scan.scanned,
      budgetReached: scan.budgetReached || scan.nextOffset !== null,
    };
  }),

  /** How many dead letters a bulk action with this filter would touch (shown before the action runs). */
  preview: viewerProcedure.input(z.strictObject({ filter: filterSchema, queue: queueInput })).query(async ({ ctx, input }) => {
    const queue = queueScope(requireQueue(ctx.sources), input.queue);
    if (!hasFilter(input.filter)) {
      const depths = await backendCall(queue, "counting dead letters", () => queue.depths());
      return { count: depths.dead, exact: true };
    }
    takeScan(ctx.sources.scans, ctx.principal, "deadLetters.preview");
    const scan = await backendCall(queue, "counting dead letters", () =>
      scanDead(queue.backend, { filter: input.filter, offset: 0, want: SCAN_BUDGET, redaction: ctx.sources.redaction }),
    );
    return { count: scan.rows.length, exact: !scan.budgetReached && scan.nextOffset === null };
  }),

  /**
   * Requeues dead letters with their attempts reset. With `payload` (one id): the dead letter is replaced by a job
   * with that payload, checked against the task's schema; `jobId` names it and the audit entry keeps the diff.
   */
  retry: operatorProcedure
    .input(z.strictObject({ ids: idsSchema, queue: queueInput, payload: z.unknown().optional() }))
    .mutation(async ({ ctx, input }): Promise<{ retried: string[]; missing: string[]; jobId?: string | null }> => {
      const queue = queueScope(requireQueue(ctx.sources), input.queue);
      checkIdsPerCall(ctx.principal, "deadLetters.retry", input.ids.length);
      if (input.payload !== undefined) {
        if (input.ids.length !== 1) throw new TRPCError({ code: "BAD_REQUEST", message: "retry with an edited payload takes one id" });
        return retryDeadWithPayload(ctx, queue, { id: input.ids[0]!, payload: input.payload, queueName: input.queue });
      }
      return retryDeadLetters(ctx, queue, { ids: input.ids, queueName: input.queue });
    }),

  discard: operatorProcedure.input(z.strictObject({ ids: idsSchema, queue: queueInput })).mutation(async ({ ctx, input }) => {
    const queue = queueScope(requireQueue(ctx.sources), input.queue);
    checkIdsPerCall(ctx.principal, "deadLetters.discard", input.ids.length);
    return discardDeadLetters(ctx, queue, { ids: input.ids, queueName: input.queue });
  }),

  /**
   * Starts a throttled replay of every dead letter matching the filter (all of them without one) that died before
   * now, at `ratePerSecond`; follow it with deadLetters.replays. Audited when it starts and when it ends.
   */
  retryMatching: operatorProcedure
    .input(z.strictObject({ filter: filterSchema, ratePerSecond: z.number().int().min(1).max(10_000).default(100), queue: queueInput }))
    .mutation(async ({ ctx, input }) => {
      requireBulkRole(ctx.principal, "deadLetters.retryMatching");
      const queue = queueScope(requireQueue(ctx.sources), input.queue);
      const filter = input.filter ?? {};
      if (ctx.sources.replays.running() >= MAX_RUNNING_REPLAYS) throw busy();
      const replay = await auditedCall(
        ctx,
        { action: "deadLetters.retryMatching", ids: [], filter: auditFilter(input) },
        async () => {
          const counted = await countMatching(ctx, queue, filter);
          try {
            return ctx.sources.replays.start({
              queue: () => {
                const service = ctx.sources.queue();
                return service && queueScope(service, input.queue);
              },
              filter,
              shownFilter: input.filter ? { ...input.filter } : null,
              total: counted.total,
              totalExact: counted.exact,
              ratePerSecond: input.ratePerSecond,
              by: ctx.principal.name,
              redaction: ctx.sources.redaction,
              onFinish: (view, ids) =>
                recordAudit(ctx, {
                  action: "deadLetters.replay",
                  ids,
                  filter: input.filter ? { ...input.filter } : null,
                  outcome: { replayId: view.replayId, state: view.state, done: view.done, failed: view.failed, ...(view.error ? { error: view.error } : {}) },
                }),
            });
          } catch (error) {
            if ((error as JfastError).code === "REPLAYS_BUSY") throw busy();
            throw error;
          }
        },
        (started) => ({ replayId: started.replayId, total: started.total, totalExact: started.totalExact, ratePerSecond: started.ratePerSecond }),
      );
      return { replayId: replay.replayId, total: replay.total, totalExact: replay.totalExact, ratePerSecond: replay.ratePerSecond };
    }),

  /**
   * A replay's dry run: how many dead letters match, and how many of those the inbox would skip because their
   * task is idempotent and their effect already committed. A [scan](#scan-limits).
   */
  replayPreview: viewerProcedure.input(z.strictObject({ filter: filterSchema, queue: queueInput }).prefault({})).query(async ({ ctx, input }) => {
    const queue = queueScope(requireQueue(ctx.sources), input.queue);
    takeScan(ctx.sources.scans, ctx.principal, "deadLetters.replayPreview");
    return backendCall(queue, "previewing a replay", () =>
      previewReplay({ queue, registry: ctx.sources.registry, database: ctx.sources.database?.() ?? null, filter: input.filter ?? {}, redaction: ctx.sources.redaction }),
    );
  }),

  /** Stops a running replay after the slice in flight; what it requeued stays requeued. Audited. */
  stopReplay: operatorProcedure.input(z.strictObject({ replayId: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    const view = await auditedCall(
      ctx,
      { action: "deadLetters.stopReplay", ids: [], filter: { replayId: input.replayId } },
      async () => ctx.sources.replays.stop({ replayId: input.replayId, by: ctx.principal.name }),
      (found) => (found ? { state: found.state, done: found.done } : { found: false }),
    );
    if (!view) throw new TRPCError({ code: "NOT_FOUND", message: `no replay ${input.replayId} in this process; deadLetters.replays lists them` });
    return { replayId: view.replayId, stopping: view.state === "running", state: view.state, done: view.done };
  }),

  /** Replays started in this process, newest first, at most 20. */
  replays: viewerProcedure.query(({ ctx }): ReplayView[] => ctx.sources.replays.recent()),

  discardMatching: operatorProcedure.input(z.strictObject({ filter: filterSchema, queue: queueInput })).mutation(async ({ ctx, input }) => {
    requireBulkRole(ctx.principal, "deadLetters.discardMatching");
    const queue = queueScope(requireQueue(ctx.sources), input.queue);
    const outcome = await auditedCall(
      ctx,
      { action: "deadLetters.discardMatching", ids: [], filter: auditFilter(input) },
      () => bulk(ctx, queue, input.filter, (ids) => queue.backend.discardDead(ids ? { ids } : { all: true }).then((r) => r.discarded)),
      (done) => ({ discarded: done.count, budgetReached: done.budgetReached }),
      (done) => done.ids,
    );
    return { discarded: outcome.count, budgetReached: outcome.budgetReached };
  }),
});

type Ctx = AdminContext & { principal: AdminPrincipal };

/** Without a filter the backend acts on all dead letters in one call; with one, on the matches read within the budget. */
async function bulk(ctx: Ctx, queue: QueueProvider, filter: DeadFilter | undefined, act: (ids: string[] | null) => Promise<string[]>) {
  if (!hasFilter(filter)) {
    const ids = await backendCall(queue, "bulk action", () => act(null));
    return { ids, count: ids.length, budgetReached: false };
  }
  const scan = await backendCall(queue, "selecting dead letters", () => scanDead(queue.backend, { filter, offset: 0, want: SCAN_BUDGET, redaction: ctx.sources.redaction }));
  const done: string[] = [];
  const ids = scan.rows.map((d) => d.job.id);
  for (let i = 0; i < ids.length; i += REPLAY_BATCH) {
    done.push(...(await backendCall(queue, "bulk action", () => act(ids.slice(i, i + REPLAY_BATCH)))));
    if (i + REPLAY_BATCH < ids.length) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { ids: done, count: done.length, budgetReached: scan.budgetReached || scan.nextOffset !== null };
}

/** What the audit trail records of a bulk action's selection: its filter and the named queue it acted on. */
function auditFilter(input: { filter?: DeadFilter | undefined; queue?: string | undefined }): Record<string, unknown> | null {
  if (!input.filter && !input.queue) return null;
  return { ...input.filter, ...(input.queue ? { queue: input.queue } : {}) };
}

/** How many dead letters a replay will cover: the counter without a filter, else a scan within the budget. */
async function countMatching(ctx: Ctx, queue: NonNullable<ReturnType<AdminContext["sources"]["queue"]>>, filter: DeadFilter): Promise<{ total: number; exact: boolean }> {
  if (!hasFilter(filter)) return { total: (await backendCall(queue, "counting dead letters", () => queue.depths())).dead, exact: true };
  const scan = await backendCall(queue, "counting dead letters", () => scanDead(queue.backend, { filter, offset: 0, want: SCAN_BUDGET, redaction: ctx.sources.redaction }));
  return { total: scan.rows.length, exact: !scan.budgetReached && scan.nextOffset === null };
}

function busy(): TRPCError {
  const error = replaysBusy();
  return new TRPCError({ code: "TOO_MANY_REQUESTS", message: error.message, cause: error });
}
