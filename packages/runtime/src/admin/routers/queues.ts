import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { Depths, TaskDepths } from "../../core/queue-backend.js";
import type { PausedTask } from "../../core/pause.js";
import { pauseUnsupportedReason } from "../../queue/queue-control.js";
import { auditedCall } from "../audit-call.js";
import { backendCall, requireQueue } from "../queue-access.js";
import type { AdminSources } from "../sources.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";

export interface QueueTaskView extends Depths {
  task: string;
  /** The module that registers it; null for a task with jobs but no handler in this service. */
  module: string | null;
  paused: boolean;
  pausedAt: string | null;
  pausedBy: string | null;
}

export interface QueuesView {
  enabled: boolean;
  /** Every registered task (zeros when it has no job), then tasks that only have jobs; by name. */
  tasks: QueueTaskView[];
  /** "estimated": split by task from a bounded sample (PostgreSQL past 10 000 jobs per state, Redis past 1 000, one tenant's older dead letters). */
  countsAre: "exact" | "estimated";
  /** Set where the backend cannot count per task (RabbitMQ): every count is 0 and this says why. */
  countsUnavailableReason: string | null;
  pauseSupported: boolean;
  pauseUnsupportedReason: string | null;
  /** Where paused tasks are kept: "sql", "redis", "memory"; null when pausing is not supported. */
  pauseStore: "sql" | "redis" | "memory" | null;
}

const taskInput = z.strictObject({ task: z.string().min(1).max(200) });

export const queuesRouter = router({
  /** Depths per task, paused or not, optionally of one tenant's jobs. */
  list: viewerProcedure
    .input(z.strictObject({ tenant: z.string().min(1).max(200).optional() }).optional())
    .query(async ({ ctx, input }): Promise<QueuesView> => {
      const queue = ctx.sources.queue();
      if (!queue) {
        return { enabled: false, tasks: [], countsAre: "exact", countsUnavailableReason: null, pauseSupported: false, pauseUnsupportedReason: null, pauseStore: null };
      }
      const [counted, paused] = await Promise.all([
        queue.backend.depthsByTask(input?.tenant ? { tenantId: input.tenant } : {}).then(
          (byTask) => ({ byTask, unavailable: null as string | null }),
          (error: unknown) => {
            if ((error as { code?: unknown }).code === "NOT_SUPPORTED") {
              return { byTask: { tasks: {}, exact: false } as TaskDepths, unavailable: (error as Error).message.split("\n")[0]! };
            }
            throw backendFailure(queue.backend.kind, error);
          },
        ),
        queue.pauses ? backendCall(queue, "reading paused tasks", () => queue.pauses!.store.list()) : Promise.resolve([] as PausedTask[]),
      ]);
      const pausedByTask = new Map(paused.map((p) => [p.task, p]));
      const modules = new Map(ctx.sources.registry.all().map((t) => [t.name, t.module]));
      const names = [...new Set([...modules.keys(), ...Object.keys(counted.byTask.tasks), ...pausedByTask.keys()])].sort();
      const reason = pauseUnsupportedReason({ backend: queue.backend, pauses: queue.pauses });
      return {
        enabled: true,
        tasks: names.map((task) => {
          const depths = counted.byTask.tasks[task] ?? { ready: 0, scheduled: 0, running: 0, dead: 0 };
          const pause = pausedByTask.get(task);
          return { task, module: modules.get(task) ?? null, ...depths, paused: Boolean(pause), pausedAt: pause?.pausedAt ?? null, pausedBy: pause?.pausedBy ?? null };
        }),
        countsAre: counted.byTask.exact ? "exact" : "estimated",
        countsUnavailableReason: counted.unavailable,
        pauseSupported: reason === null,
        pauseUnsupportedReason: reason,
        pauseStore: queue.pauses?.store.kind ?? null,
      };
    }),

  /** Stops every worker of the service from starting the task's jobs (docs/worker.md#pausing-a-task). */
  pause: operatorProcedure.input(taskInput).mutation(async ({ ctx, input }) => {
    const pauses = requirePauses(ctx.sources, input.task);
    const entry = await auditedCall(
      ctx,
      { action: "queues.pause", ids: [], filter: { task: input.task } },
      () => storeCall(ctx.sources, "pausing the task", () => pauses.pause({ task: input.task, by: ctx.principal.name })),
      (paused) => ({ paused: true, pausedAt: paused.pausedAt, pausedBy: paused.pausedBy }),
    );
    return { task: input.task, paused: true, pausedAt: entry.pausedAt, pausedBy: entry.pausedBy };
  }),

  /** Lets workers start the task's jobs again; the ones queued meanwhile run in their usual order. */
  resume: operatorProcedure.input(taskInput).mutation(async ({ ctx, input }) => {
    const pauses = requirePauses(ctx.sources, input.task);
    const was = await auditedCall(
      ctx,
      { action: "queues.resume", ids: [], filter: { task: input.task } },
      () => storeCall(ctx.sources, "resuming the task", () => pauses.resume({ task: input.task })),
      (wasPaused) => ({ paused: false, wasPaused }),
    );
    return { task: input.task, paused: false, wasPaused: was };
  }),
});

function requirePauses(sources: AdminSources, task: string) {
  const queue = requireQueue(sources);
  const registered = sources.registry.all().map((t) => t.name);
  if (!registered.includes(task)) {
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: `no task named "${task}" is registered in the service "${sources.service.name}"; registered tasks: ${registered.sort().join(", ") || "(none)"}`,
    });
  }
  if (!queue.pauses) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: pauseUnsupportedReason({ backend: queue.backend, pauses: null })! });
  }
  return queue.pauses;
}

function storeCall<T>(sources: AdminSources, what: string, fn: () => Promise<T>): Promise<T> {
  return backendCall(requireQueue(sources), what, fn);
}

function backendFailure(kind: string, error: unknown): TRPCError {
  return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `counting depths per task failed on the ${kind} queue: ${(error as Error).message}`, cause: error });
}
