import { z } from "zod";
import { gatherTrace, type TraceView } from "../trace.js";
import { router, viewerProcedure } from "../trpc.js";

/** A request's timeline, this service's share (docs/admin-api.md#timeline). */
export const traceRouter = router({
  /**
   * From a request id, a job id or a flow id: the jobs, attempts, flows, subscriber jobs, events and outbox rows
   * (Kafka hops among them) of the request, oldest first. The dashboard merges every service's share.
   */
  get: viewerProcedure
    .input(z.strictObject({ id: z.string().min(1).max(200), limit: z.number().int().min(1).max(1000).default(500) }))
    .query(({ ctx, input }): Promise<TraceView> => gatherTrace(ctx.sources, input.id, input.limit)),
});
