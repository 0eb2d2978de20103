import { z } from "zod";
import { listWorkersView, type WorkersView } from "../worker-views.js";
import { router, viewerProcedure } from "../trpc.js";

/** The worker registry (docs/admin-api.md#workers). */
export const workersRouter = router({
  /**
   * Every registered worker process, online or gone (until forgotten), with the jobs it runs; `jobs: false` skips
   * reading those jobs (the Overview's count).
   */
  list: viewerProcedure
    .input(z.strictObject({ jobs: z.boolean().default(true) }).prefault({}))
    .query(({ ctx, input }): Promise<WorkersView> => listWorkersView(ctx.sources, input)),
});
