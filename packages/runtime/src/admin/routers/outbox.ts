import { router, viewerProcedure } from "../trpc.js";

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

export const outboxRouter = router({
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
