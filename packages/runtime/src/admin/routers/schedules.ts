import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { changeSchedule } from "../operations/schedules.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";
import type { ScheduleView } from "../sources.js";

export interface SchedulesView {
  /** `[plugin.queue] scheduler = true` and a scheduler is running in this process. */
  enabled: boolean;
  /** False when the running scheduler cannot describe its schedules to the admin API. */
  described: boolean;
  schedules: ScheduleView[];
  error: string | null;
}

const nameSchema = z.string().min(1).max(200);
const everySchema = z.strictObject({
  days: z.number().min(0).optional(),
  hours: z.number().min(0).optional(),
  minutes: z.number().min(0).optional(),
  seconds: z.number().min(0).optional(),
  milliseconds: z.number().min(0).optional(),
});
/** The same options a declared schedule takes; the scheduler checks them as it checks a declaration. */
const specFields = {
  task: z.string().min(1).max(200),
  cron: z.string().min(1).max(200).optional(),
  every: everySchema.optional(),
  timezone: z.string().min(1).max(100).optional(),
  payload: z.record(z.string(), z.unknown()).optional(),
  catchUp: z.boolean().optional(),
};
const createInput = z.strictObject({ name: nameSchema, ...specFields });
const updateInput = z.strictObject({ name: nameSchema, ...specFields, task: specFields.task.optional() });
const nameInput = z.strictObject({ name: nameSchema });

export const schedulesRouter = router({
  /** Every schedule with its next ticks (UTC), last tick and last error. */
  list: viewerProcedure
    .input(z.strictObject({ count: z.number().int().min(1).max(20).default(5) }).optional())
    .query(async ({ ctx, input }): Promise<SchedulesView> => {
      const scheduler = ctx.sources.scheduler();
      if (!scheduler) return { enabled: false, described: false, schedules: [], error: null };
      if (typeof scheduler.describeSchedules !== "function") return { enabled: true, described: false, schedules: [], error: null };
      try {
        const schedules = await scheduler.describeSchedules({ count: input?.count ?? 5 });
        return {
          enabled: true,
          described: true,
          schedules: schedules.map((s) => (s.payload ? { ...s, payload: ctx.sources.redaction.payload(s.payload) as Record<string, unknown> } : s)),
          error: null,
        };
      } catch (error) {
        return { enabled: true, described: true, schedules: [], error: (error as Error).message };
      }
    }),

  /** Makes a schedule at run time; refused with the declaration's errors (CRON_INVALID, TIMEZONE_INVALID, ...), nothing stored. */
  create: operatorProcedure.input(createInput).mutation(({ ctx, input }) => {
    const { name, ...spec } = input;
    return changeSchedule.create(ctx, { name, spec });
  }),

  /** Edits a schedule made at run time; the audit entry keeps what it was and what it became. */
  update: operatorProcedure.input(updateInput).mutation(({ ctx, input }) => {
    const { name, ...patch } = input;
    return changeSchedule.update(ctx, { name, patch });
  }),

  /** Stops a schedule's ticks (declared or made at run time) until resumed; the ticks in between are skipped. */
  pause: operatorProcedure.input(nameInput).mutation(({ ctx, input }) => changeSchedule.pause(ctx, input)),

  /** Ticks again from the next one; the ones that passed while paused stay skipped. */
  resume: operatorProcedure.input(nameInput).mutation(({ ctx, input }) => changeSchedule.resume(ctx, input)),

  /** Deletes a schedule made at run time (a declared one is refused: SCHEDULE_DECLARED). */
  delete: operatorProcedure.input(nameInput).mutation(({ ctx, input }) => changeSchedule.delete(ctx, input)),

  /** Enqueues one job of the schedule now, outside its ticks (paused or not). */
  trigger: operatorProcedure.input(nameInput).mutation(({ ctx, input }) => changeSchedule.trigger(ctx, input)),
});
