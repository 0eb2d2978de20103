import { z } from "zod";
import type { DeadOutboxRow } from "../../outbox/outbox-rows.js";
import type { AttemptError } from "../../core/job.js";
import { discardOutboxRows, outboxCall, requireOutbox, retryOutboxRows } from "../operations/outbox-rows.js";
import { MAX_CURSOR_OFFSET } from "../cursors.js";
import { checkIdsPerCall, MAX_IDS_PER_CALL } from "../bulk-limit.js";
import type { Redaction } from "../redact.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";

export interface OutboxView {
  enabled: boolean;
  status: "ok" | "degraded" | "unavailable" | null;
  /** Rows waiting for the relay, when the outbox reports it. */
  pending: number | null;
  /** Age in seconds of the oldest pending row, when reported. */
  lagSeconds: number | null;
  /** Rows whose delivery failed at least once, when reported. */
  failing: number | null;
  /** Everything the outbox's health check said, as it said it. */
  detail: Record<string, unknown>;
}

/** A row the relay set aside as dead: what it carried (its payload or event data redacted) and every delivery error. */
export type DeadOutboxView = DeadOutboxRow;

const idsSchema = z.array(z.string().min(1).max(400)).min(1).max(MAX_IDS_PER_CALL);

export const outboxRouter = router({
  /** Dead rows, newest death first, a page at a time. */
  dead: viewerProcedure
    .input(z.strictObject({ limit: z.number().int().min(1).max(200).default(50), offset: z.number().int().min(0).max(MAX_CURSOR_OFFSET).default(0) }).default({ limit: 50, offset: 0 }))
    .query(async ({ ctx, input }): Promise<{ enabled: boolean; rows: DeadOutboxView[] }> => {
      const outbox = ctx.sources.outbox();
      if (!outbox) return { enabled: false, rows: [] };
      const rows = await outboxCall("reading dead outbox rows", () => outbox.listDead(input));
      return { enabled: true, rows: rows.map((row) => deadOutboxView(row, ctx.sources.redaction)) };
    }),

  /** Puts dead rows back for the relay with their attempts reset. Audited. */
  retry: operatorProcedure.input(z.strictObject({ ids: idsSchema })).mutation(({ ctx, input }) => {
    requireOutbox(ctx.sources);
    checkIdsPerCall(ctx.principal, "outbox.retry", input.ids.length);
    return retryOutboxRows(ctx, { ids: input.ids });
  }),

  /** Deletes dead rows for good. Audited. */
  discard: operatorProcedure.input(z.strictObject({ ids: idsSchema })).mutation(({ ctx, input }) => {
    requireOutbox(ctx.sources);
    checkIdsPerCall(ctx.principal, "outbox.discard", input.ids.length);
    return discardOutboxRows(ctx, { ids: input.ids });
  }),

  status: viewerProcedure.query(async ({ ctx }): Promise<OutboxView> => {
    const outbox = ctx.sources.outbox();
    if (!outbox) return { enabled: false, status: null, pending: null, lagSeconds: null, failing: null, detail: {} };
    try {
      const health = await outbox.health();
      return {
        enabled: true,
        status: health.status,
        pending: numberOrNull(health.pending),
        lagSeconds: numberOrNull(health.lagSeconds ?? health.lag_seconds),
        failing: numberOrNull(health.failing),
        detail: health,
      };
    } catch (error) {
      return { enabled: true, status: "unavailable", pending: null, lagSeconds: null, failing: null, detail: { error: (error as Error).message } };
    }
  }),
});

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * The body is a job (its payload) or an event (its data): redacted as a payload is. The delivery errors are
 * redacted as a job's are: a broker's or a queue's error may quote the body it refused.
 */
function deadOutboxView(row: DeadOutboxRow, redaction: Redaction): DeadOutboxView {
  const body = row.body as { payload?: unknown; data?: unknown } | null;
  const shown = body && typeof body === "object" ? { ...body, ...("payload" in body ? { payload: redaction.payload(body.payload) } : {}), ...("data" in body ? { data: redaction.payload(body.data) } : {}) } : body;
  const values = redaction.values(body && typeof body === "object" ? [body.payload, body.data] : typeof body === "string" ? { raw: body } : null);
  const error = (e: AttemptError): AttemptError => redaction.attempt(e, values)!;
  return {
    ...row,
    body: typeof shown === "string" ? redaction.text(shown, values) : shown,
    lastError: row.lastError ? error(row.lastError) : null,
    errors: Array.isArray(row.errors) ? row.errors.map(error) : row.errors,
  };
}
