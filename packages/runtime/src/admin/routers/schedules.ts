import { z } from "zod";
import { router, viewerProcedure } from "../trpc.js";
import type { ScheduleView } from "../sources.js";

export interface SchedulesView {
  /** `[plugin.queue] scheduler = true` and a scheduler is running in this process. */
  enabled: boolean;
  /** False when the running scheduler cannot describe its schedules to the admin API. */
  described: boolean;
  schedules: ScheduleView[];
  error: string | null;
}

export const schedulesRouter = router({
  /** Every schedule with its next ticks (UTC), last tick and last error. */
  list: viewerProcedure
    .input(z.strictObject({ count: z.number().int().min(1).max(20).default(5) }).optional())
    .query(async ({ ctx, input }): Promise<SchedulesView> => {
      const scheduler = ctx.sources.scheduler();
      if (!scheduler) return { enabled: false, described: false, schedules: [], error: null };
      if (typeof scheduler.describeSchedules !== "function") return { enabled: true, described: false, schedules: [], error: null };
      try {
        return { enabled: true, described: true, schedules: await scheduler.describeSchedules({ count: input?.count ?? 5 }), error: null };
      } catch (error) {
        return { enabled: true, described: true, schedules: [], error: (error as Error).message };
      }
    }),
});
