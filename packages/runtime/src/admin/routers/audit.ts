import { z } from "zod";
import { router, viewerProcedure } from "../trpc.js";

export const auditRouter = router({
  /** The audit trail of admin mutations, newest first. */
  list: viewerProcedure
    .input(
      z
        .strictObject({
          limit: z.number().int().min(1).max(200).default(50),
          /** An entry's id (the last of the previous page). */
          before: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "not an audit entry's id: pass the id of the last entry of the previous page").optional(),
          /** Only entries whose filter names this tenant. */
          tenant: z.string().min(1).max(200).optional(),
        })
        .optional(),
    )
    .query(async ({ ctx, input }) => ({
      store: ctx.sources.audit.kind,
      entries: await ctx.sources.audit.list({ limit: input?.limit ?? 50, before: input?.before, tenant: input?.tenant }),
    })),
});
