import { z } from "zod";
import { router, viewerProcedure } from "../trpc.js";

export const auditRouter = router({
  /** The audit trail of admin mutations, newest first. */
  list: viewerProcedure
    .input(
      z
        .strictObject({
          limit: z.number().int().min(1).max(200).default(50),
          before: z.string().max(100).optional(),
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
