import { TRPCError } from "@trpc/server";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import type { ScheduleControl, ScheduleSpecInput, ScheduleSpecPatch } from "../../scheduler/schedule-control.js";
import { JfastError } from "../../errors/jfast-error.js";

/** The scheduler's refusals as the caller sees them: the declaration's message and code, with the HTTP status that fits. */
function refusal(error: unknown): never {
  if (error instanceof JfastError) {
    const code = error.code === "SCHEDULE_NOT_FOUND" ? "NOT_FOUND" : error.code === "SCHEDULE_DUPLICATE" ? "CONFLICT" : error.code === "SCHEDULE_DECLARED" ? "PRECONDITION_FAILED" : error.code === "NOT_SUPPORTED" ? "NOT_IMPLEMENTED" : "BAD_REQUEST";
    throw new TRPCError({ code, message: `${error.message} [${error.code}]${error.hint ? `; ${error.hint}` : ""}`, cause: error });
  }
  throw error;
}

/**
 * A schedule change, audited by person: the entry is written first, then the change, then its outcome. The running
 * scheduler's control, or one opened on the same store for this call (a process with the scheduler off, the CLI).
 */
async function change<T>(ctx: OperatorContext, action: string, name: string, filter: Record<string, unknown> | null, run: (control: ScheduleControl) => Promise<T>, outcome: (result: T) => Record<string, unknown>): Promise<T> {
  const opened = await ctx.sources.scheduleControl?.();
  if (!opened) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: "this service has no schedule store to change: schedules made at run time need the PostgreSQL, Redis or RabbitMQ queue, or a running scheduler (jfast docs scheduler#at-run-time)",
    });
  }
  try {
    return await auditedCall(ctx, { action, ids: [name], filter }, () => run(opened.control).catch(refusal), outcome);
  } finally {
    await opened.close();
  }
}

function shownSpec(ctx: OperatorContext, spec: ScheduleSpecPatch): Record<string, unknown> {
  return { ...spec, ...(spec.payload ? { payload: ctx.sources.redaction.payload(spec.payload) } : {}) };
}

/** schedules.create|update|pause|resume|delete|trigger, for the admin router and the CLI's repairs alike. */
export const changeSchedule = {
  async create(ctx: OperatorContext, input: { name: string; spec: ScheduleSpecInput }) {
    const { name, spec } = input;
    await change(ctx, "schedules.create", name, shownSpec(ctx, spec), (c) => c.create({ name, spec, actor: ctx.principal.name }), () => ({ created: true }));
    return { name, created: true as const };
  },
  async update(ctx: OperatorContext, input: { name: string; patch: ScheduleSpecPatch }) {
    const { name, patch } = input;
    const result = await change(ctx, "schedules.update", name, shownSpec(ctx, patch), (c) => c.update({ name, patch, actor: ctx.principal.name }), (r) => ({
      before: shownSpec(ctx, r.before),
      after: shownSpec(ctx, r.after),
    }));
    return { name, before: shownSpec(ctx, result.before), after: shownSpec(ctx, result.after) };
  },
  async pause(ctx: OperatorContext, { name }: { name: string }) {
    const result = await change(ctx, "schedules.pause", name, null, (c) => c.pause({ name, actor: ctx.principal.name }), (r) => ({ ...r }));
    return { name, paused: true as const, ...result };
  },
  async resume(ctx: OperatorContext, { name }: { name: string }) {
    const result = await change(ctx, "schedules.resume", name, null, (c) => c.resume({ name, actor: ctx.principal.name }), (r) => ({ ...r }));
    return { name, paused: false as const, ...result };
  },
  async delete(ctx: OperatorContext, { name }: { name: string }) {
    await change(ctx, "schedules.delete", name, null, (c) => c.delete({ name }), (spec) => ({ deleted: shownSpec(ctx, spec) }));
    return { name, deleted: true as const };
  },
  async trigger(ctx: OperatorContext, { name }: { name: string }) {
    const result = await change(ctx, "schedules.trigger", name, null, (c) => c.trigger({ name }), (r) => ({ jobId: r.jobId }));
    return { name, ...result };
  },
  /** Declared and stored schedules from the store (for a process without a running scheduler). */
  async list(ctx: OperatorContext, { count }: { count: number }) {
    const opened = await ctx.sources.scheduleControl?.();
    if (!opened) return null;
    try {
      const listed = await opened.control.list({ count });
      return listed.map((s) => ({ ...s, payload: ctx.sources.redaction.payload(s.payload) as Record<string, unknown> }));
    } finally {
      await opened.close();
    }
  },
};
