import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { Redaction } from "../redact.js";
import { JobState } from "../../core/job-state.js";
import { ListState, type CancelResult, type DeadJob } from "../../core/queue-backend.js";
import { cancelJob } from "../operations/job-actions.js";
import { SCAN_BUDGET, scanDead, type DeadFilter } from "../dead-scan.js";
import { backendCall } from "../queue-access.js";
import { findJob } from "../queue-scope.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";
import { RETRY_ACTIONS, retryMarks, type RetryMark } from "../retry-marks.js";
import type { AdminSources } from "../sources.js";
import { attemptsView, jobView, resultView, type JobDetailView, type JobLimitView, type JobView } from "../views.js";
import { describeLimitWait, normalizeLimits } from "../../core/limits.js";
import type { TaskRegistry } from "../../core/registry.js";
import type { JobInfo } from "../../core/queue-backend.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { jobListingProcedures } from "./job-listing.js";
import { createJobFor, updateWaitingJob } from "../operations/edit-jobs.js";
import { requireQueue } from "../queue-access.js";
import { payloadJsonSchema } from "../../contracts/payload-diff.js";
import { badCursor, parseOffset } from "../cursors.js";
import { takeScan } from "../scan-limit.js";

/** One path segment: an object key; ten levels are plenty for a payload field. */
const pathSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^.]+(\.[^.]+){0,9}$/, "a dot path of object keys, e.g. customer.id (at most 10 levels, no empty key)");

const searchInput = z.strictObject({
  id: z.string().min(1).max(200).optional(),
  task: z.string().min(1).max(200).optional(),
  tenant: z.string().min(1).max(200).optional(),
  state: z.enum([ListState.ready, ListState.scheduled, ListState.running, ListState.completed, ListState.dead, ListState.cancelled, ListState.expired]).optional(),
  payload: z.strictObject({ path: pathSchema, equals: z.union([z.string().max(500), z.number(), z.boolean()]) }).optional(),
  limit: z.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});

export interface JobSearchView {
  enabled: boolean;
  items: JobView[];
  nextCursor: string | null;
  /** What was searched and how far: "by id (primary key)", "dead letters by payload (indexed)", or the bound of a scan. */
  scope: string;
  /** A scan stopped at its bound; nextCursor continues it. */
  budgetReached: boolean;
}

export const jobsRouter = router({
  ...jobListingProcedures,
  /**
   * A task's payload schema as JSON Schema, for the "New job" form: from its Standard Schema when the library can
   * say it (zod 4.2+, valibot), else null (the dashboard then offers a JSON editor). NOT_FOUND for an unknown task.
   */
  taskSchema: viewerProcedure.input(z.strictObject({ task: z.string().min(1).max(200) })).query(({ ctx, input }): { task: string; hasSchema: boolean; jsonSchema: Record<string, unknown> | null } => {
    const definition = ctx.sources.registry.get(input.task);
    if (!definition) throw new TRPCError({ code: "NOT_FOUND", message: `no task "${input.task}" in this service; overview.tasks lists them` });
    const schema = definition.options.schema;
    return { task: input.task, hasSchema: schema !== undefined, jsonSchema: schema ? ((payloadJsonSchema(schema) as Record<string, unknown> | null) ?? null) : null };
  }),
  /**
   * Makes a job of one of the service's tasks (the dashboard's "New job" and "Duplicate"): `delayMs`, `priority`
   * (0–9) and `tenant` optional; checked against the task's schema (PAYLOAD_INVALID); audited.
   */
  create: operatorProcedure
    .input(
      z.strictObject({
        task: z.string().min(1).max(200),
        payload: z.unknown().optional(),
        delayMs: z.number().int().min(0).max(366 * 86_400_000).optional(),
        priority: z.number().int().min(0).max(9).optional(),
        tenant: z.string().min(1).max(200).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      createJobFor(ctx, requireQueue(ctx.sources), { task: input.task, payload: input.payload ?? {}, delayMs: input.delayMs, priority: input.priority, tenantId: input.tenant ?? null }),
    ),
  /**
   * Edits a waiting or scheduled job in place (docs/admin-api.md#editing-a-waiting-job): `payload` (checked against
   * the task's schema, PAYLOAD_INVALID), `priority` (0–9), `runAt` (ISO time) or `delayMs` (from now). CONFLICT
   * (JOB_NOT_EDITABLE) once the job is claimed, finished or dead; METHOD_NOT_SUPPORTED on RabbitMQ. Audited with
   * the before/after of each change.
   */
  update: operatorProcedure
    .input(
      z
        .strictObject({
          id: z.string().min(1).max(200),
          payload: z.unknown().optional(),
          priority: z.number().int().min(0).max(9).optional(),
          runAt: z.string().datetime({ offset: true }).optional(),
          delayMs: z.number().int().min(0).max(366 * 86_400_000).optional(),
        })
        .refine((input) => input.runAt === undefined || input.delayMs === undefined, { message: "give runAt or delayMs, not both" }),
    )
    .mutation(({ ctx, input }) => {
      const runAt = input.runAt !== undefined ? new Date(input.runAt) : input.delayMs !== undefined ? new Date(Date.now() + input.delayMs) : undefined;
      return updateWaitingJob(ctx, requireQueue(ctx.sources), { id: input.id, payload: input.payload, priority: input.priority, runAt });
    }),
  /**
   * Cancels a waiting or running job (docs/admin-api.md#cancelling-a-job). Audited. NOT_FOUND for an unknown id;
   * METHOD_NOT_SUPPORTED where the backend cannot cancel (RabbitMQ).
   */
  cancel: operatorProcedure
    .input(z.strictObject({ id: z.string().min(1).max(200) }))
    .mutation(async ({ ctx, input }): Promise<CancelResult & { id: string }> => {
      const result = await cancelJob(ctx, input.id);
      if (result.state === null) throw new TRPCError({ code: "NOT_FOUND", message: `no job with id ${input.id}` });
      return { id: input.id, ...result };
    }),

  /**
   * One job in any state, with its payload (redacted), every attempt's error and stack, and where it was retried
   * (from the audit trail and the attempt numbers: retryMarks). Also "search by id".
   */
  get: viewerProcedure
    .input(z.strictObject({ id: z.string().min(1).max(200) }))
    .query(async ({ ctx, input }): Promise<{ enabled: boolean; job: JobDetailView | null; notFoundReason: string | null }> => {
      const queue = ctx.sources.queue();
      if (!queue) return { enabled: false, job: null, notFoundReason: null };
      const info = await backendCall(queue, "reading the job", () => findJob(queue, input.id)).catch((error: unknown) => {
        // A broker that cannot look a waiting job up by id (RabbitMQ) says so instead of failing the call.
        if (causeCode(error) === "NOT_SUPPORTED") return (error as { cause?: Error }).cause?.message ?? (error as Error).message;
        throw error;
      });
      if (typeof info === "string") return { enabled: true, job: null, notFoundReason: info.split("\n")[0]! };
      if (!info) return { enabled: true, job: null, notFoundReason: null };
      const view = { ...jobView(info, ctx.sources.redaction), limit: await limitView(queue, ctx.sources.registry, info) };
      const redaction = ctx.sources.redaction;
      const detail = { ...view, retries: await retriesOf(ctx.sources, view), ...resultView(info, redaction), ...attemptsView(info, redaction) };
      return { enabled: true, job: detail, notFoundReason: null };
    }),

  /**
   * Finds jobs without ever scanning a table: by id (primary key, any state), or dead letters by payload field
   * (an index where the backend has one, else at most SCAN_BUDGET of the newest read), task and tenant.
   */
  search: viewerProcedure.input(searchInput).query(async ({ ctx, input }): Promise<JobSearchView> => {
    const queue = ctx.sources.queue();
    if (!queue) return { enabled: false, items: [], nextCursor: null, scope: "no queue", budgetReached: false };
    const redact = ctx.sources.redaction;

    if (input.id) {
      const info = await backendCall(queue, "reading the job", () => findJob(queue, input.id!)).catch((error: unknown) => {
        if (causeCode(error) === "NOT_SUPPORTED") return undefined;
        throw error;
      });
      if (info === undefined) {
        return { enabled: true, items: [], nextCursor: null, scope: `by id: the ${queue.backend.kind} queue can look up only dead letters and running jobs by id`, budgetReached: false };
      }
      const matches =
        info !== null &&
        (!input.task || info.job.task === input.task) &&
        (!input.tenant || info.job.tenantId === input.tenant) &&
        (!input.state || info.state === input.state || (input.state === ListState.scheduled && info.state === JobState.ready && Date.parse(info.job.availableAt) > Date.now()));
      return { enabled: true, items: matches ? [jobView(info, redact)] : [], nextCursor: null, scope: "by id (primary key)", budgetReached: false };
    }

    if (input.state && input.state !== JobState.dead) {
      if (input.payload || (!input.task && !input.tenant)) {
        throw new TRPCError({
          code: "BAD_REQUEST",
          message: `jobs in state "${input.state}" are found by id, task or tenant; searching by a payload field covers dead letters (state "dead" or none)`,
        });
      }
      return searchState(queue, { state: input.state, task: input.task, tenant: input.tenant, limit: input.limit, cursor: input.cursor }, redact);
    }
    if (!input.payload && !input.task && !input.tenant) {
      throw new TRPCError({ code: "BAD_REQUEST", message: "give an id, a payload field ({ path, equals }), a task or a tenant to search by" });
    }
    const payload = input.payload ? { path: input.payload.path.split("."), equals: input.payload.equals } : undefined;
    const hidden = payload?.path.find((key) => redact.hides(key));
    if (hidden !== undefined) {
      // Answering whether a redacted field holds a value would tell the value, one guess at a time.
      throw new TRPCError({
        code: "BAD_REQUEST",
        message: `the payload field "${hidden}" is redacted in this service ([admin] redact), so jobs cannot be searched by it; search by id, task, tenant or another field`,
      });
    }
    const filter: DeadFilter = { task: input.task, tenantId: input.tenant, payload };
    const cursor = parseCursor(input.cursor);

    if (payload && cursor.kind !== "offset") {
      // Through an index where the backend keeps one (capabilities.payloadIndex); else a bounded scan below.
      const indexed = !queue.backend.capabilities.payloadIndex ? null : await backendCall(queue, "searching dead letters", () =>
        queue.backend.searchDead({ payload, task: input.task, tenantId: input.tenant, limit: input.limit, after: cursor.kind === "key" ? cursor.value : undefined }),
      ).catch((error: unknown) => {
        if (causeCode(error) === "NOT_SUPPORTED") return null;
        if (causeCode(error) === "CURSOR_INVALID") throw new TRPCError({ code: "BAD_REQUEST", message: "not a cursor of jobs.search: pass back the nextCursor of the previous page unchanged" });
        throw error;
      });
      if (indexed) {
        return {
          enabled: true,
          items: indexed.rows.map((d) => deadView(d, redact)),
          nextCursor: indexed.next === null ? null : `k:${indexed.next}`,
          scope: "dead letters by payload (indexed)",
          budgetReached: false,
        };
      }
      if (cursor.kind === "key") throw new TRPCError({ code: "BAD_REQUEST", message: "this cursor belongs to an indexed search, which this queue does not offer" });
    }

    takeScan(ctx.sources.scans, ctx.principal, "jobs.search (a scan)");
    const scan = await backendCall(queue, "searching dead letters", () =>
      scanDead(queue.backend, { filter, offset: cursor.kind === "offset" ? cursor.value : 0, want: input.limit, redaction: redact }),
    );
    const what = [payload && "payload", input.task && "task", input.tenant && "tenant"].filter(Boolean).join(", ");
    return {
      enabled: true,
      items: scan.rows.map((d) => deadView(d, redact)),
      nextCursor: scan.nextOffset === null ? null : `o:${scan.nextOffset}`,
      scope: `dead letters by ${what}, newest first, reading at most ${SCAN_BUDGET} per call${payload ? ` (the ${queue.backend.kind} queue has no payload index)` : ""}`,
      budgetReached: scan.budgetReached,
    };
  }),
});

/**
 * A task's or tenant's jobs in one state other than dead, newest first, through that state's own index: a page reads
 * a bounded window (docs/admin-api.md#listing-jobs), so it may hold fewer than `limit` while `nextCursor` is set.
 */
async function searchState(
  queue: QueueProvider,
  params: { state: ListState; task: string | undefined; tenant: string | undefined; limit: number; cursor: string | undefined },
  redact: Redaction,
): Promise<JobSearchView> {
  const { state } = params;
  const by = [params.task && "task", params.tenant && "tenant"].filter(Boolean).join(" and ");
  if (!queue.backend.capabilities.listableStates.includes(state)) {
    return { enabled: true, items: [], nextCursor: null, scope: `${state} jobs: the ${queue.backend.kind} queue cannot list them (docs/admin-api.md#listing-jobs)`, budgetReached: false };
  }
  if (params.cursor !== undefined && !params.cursor.startsWith("l:")) throw badCursor("jobs.search");
  const page = await backendCall(queue, `listing ${state} jobs`, () =>
    queue.backend.listJobs({ state, order: "newest", task: params.task, tenantId: params.tenant, limit: params.limit, after: params.cursor?.slice(2) }),
  ).catch((error: unknown) => {
    if (causeCode(error) === "CURSOR_INVALID") throw badCursor("jobs.search");
    throw error;
  });
  return {
    enabled: true,
    items: page.rows.map((info) => jobView(info, redact)),
    nextCursor: page.next === null ? null : `l:${page.next}`,
    scope: `${state} jobs by ${by}, newest first, a bounded window of the state's index per page`,
    budgetReached: false,
  };
}

/** A retry's audit entry is bounded to the ids it names (AUDIT_MAX_IDS); past that, the attempt numbers still mark it. */
async function retriesOf(sources: AdminSources, job: JobView): Promise<RetryMark[]> {
  const entries = await sources.audit.forJob({ id: job.id, since: job.createdAt, actions: RETRY_ACTIONS, limit: 50 }).catch((error: unknown) => {
    // The job is worth showing without names on its retries.
    sources.logger.warn("reading the audit trail for a job's retries failed", { jobId: job.id, error });
    return [];
  });
  return retryMarks(job.errors, entries);
}

/** The code of the backend error behind a failed backendCall (NOT_SUPPORTED, CURSOR_INVALID...). */
function causeCode(error: unknown): unknown {
  return ((error as { cause?: { code?: unknown } }).cause ?? (error as { code?: unknown }))?.code;
}

/** The limits of a job's task, and for a waiting job what it waits on now (docs/tasks.md#limits). */
async function limitView(queue: QueueProvider, registry: TaskRegistry, info: JobInfo): Promise<JobLimitView | null> {
  const definition = registry.get(info.job.task);
  const limits = definition ? normalizeLimits(definition.options, `task("${info.job.task}")`) : null;
  if (!definition || !limits) return null;
  if (info.state !== JobState.ready || Date.parse(info.job.availableAt) > Date.now()) return { ...limits, waitsOn: null };
  const backend = queue.queueOf(definition.name).backend;
  const usage = await backend.limitUsage({ task: info.job.task }).catch(() => null);
  return { ...limits, waitsOn: usage ? describeLimitWait(info.job.task, limits, usage) : null };
}

function deadView(dead: DeadJob, redact: Redaction): JobView {
  return jobView({ job: dead.job, state: JobState.dead, lockedBy: null, lockedUntil: null, diedAt: dead.diedAt }, redact);
}

/** "k:<died_at>|<seq>" continues an indexed search, "o:<n>" a scan; anything else is refused. */
function parseCursor(cursor: string | undefined): { kind: "none" } | { kind: "key"; value: string } | { kind: "offset"; value: number } {
  if (!cursor) return { kind: "none" };
  if (cursor.startsWith("k:") && cursor.length > 2) return { kind: "key", value: cursor.slice(2) };
  const offset = cursor.startsWith("o:") ? parseOffset(cursor.slice(2)) : null;
  if (offset !== null) return { kind: "offset", value: offset };
  throw badCursor("jobs.search");
}
