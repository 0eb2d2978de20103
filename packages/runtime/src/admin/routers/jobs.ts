import { z } from "zod";
import { backendCall } from "../queue-access.js";
import { router, viewerProcedure } from "../trpc.js";
import { jobView, type JobView } from "../views.js";

export const jobsRouter = router({
  /** One job in any state, with its payload (redacted) and every attempt's error and stack. Also "search by id". */
  get: viewerProcedure
    .input(z.strictObject({ id: z.string().min(1).max(200) }))
    .query(async ({ ctx, input }): Promise<{ enabled: boolean; job: JobView | null }> => {
      const queue = ctx.sources.queue();
      if (!queue) return { enabled: false, job: null };
      const info = await backendCall(queue, "reading the job", () => queue.backend.getJob({ id: input.id }));
      return { enabled: true, job: info ? jobView(info, ctx.sources.redactFields) : null };
    }),
});
