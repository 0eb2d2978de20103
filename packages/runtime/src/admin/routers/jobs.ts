import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { Redaction } from "../redact.js";
import { JobState } from "../../core/job-state.js";
import type { CancelResult, DeadJob } from "../../core/queue-backend.js";
import { cancelJob } from "../operations/job-actions.js";
import { SCAN_BUDGET, scanDead, type DeadFilter } from "../dead-scan.js";
import { backendCall } from "../queue-access.js";
import { findJob } from "../queue-scope.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";
import { RETRY_ACTIONS, retryMarks, type RetryMark } from "../retry-marks.js";
import type { AdminSources } from "../sources.js";
import { jobView, resultView, type JobDetailView, type JobLimitView, type JobView } from "../views.js";
import { describeLimitWait, normalizeLimits } from "../../core/limits.js";
import type { TaskRegistry } from "../../core/registry.js";
import type { JobInfo } from "../../core/queue-backend.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { jobListingProcedures } from "./job-listing.js";
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
  state: z.enum([JobState.ready, JobState.running, JobState.completed, JobState.dead, JobState.cancelled]).optional(),
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
      return { enabled: true, job: { ...view, retries: await retriesOf(ctx.sources, view), ...resultView(info, ctx.sources.redaction) }, notFoundReason: null };
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
        (!input.state || info.state === input.state);
      return { enabled: true, items: matches ? [jobView(info, redact)] : [], nextCursor: null, scope: "by id (primary key)", budgetReached: false };
    }

    if (input.state && input.state !== JobState.dead) {
      throw new TRPCError({
        code: "BAD_REQUEST",
        message: `jobs in state "${input.state}" are found by id only; searching by task, tenant or payload covers dead letters (state "dead" or none)`,
      });
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
