import { TRPCError } from "@trpc/server";
import type { PausedTask } from "../../core/pause.js";
import { pauseUnsupportedReason } from "../../queue/queue-control.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { backendCall, requireQueue } from "../queue-access.js";
import { queueScope } from "../queue-scope.js";
import type { AdminSources } from "../sources.js";

/**
 * Pausing and resuming tasks (docs/worker.md#pausing-a-task): the one path of these repairs, run by the admin API
 * (queues.pause, queues.resume, queues.pauseQueue, queues.resumeQueue) and by `jfast queue pause|resume`, each
 * writing one audit entry that names the actor.
 */
export async function pauseTask(ctx: OperatorContext, task: string): Promise<PausedTask> {
  const pauses = requirePauses(ctx.sources, task);
  return auditedCall(
    ctx,
    { action: "queues.pause", ids: [], filter: { task } },
    () => storeCall(ctx.sources, "pausing the task", () => pauses.pause({ task, by: ctx.principal.name })),
    (paused) => ({ paused: true, pausedAt: paused.pausedAt, pausedBy: paused.pausedBy }),
  );
}

/** True when the task was paused. */
export async function resumeTask(ctx: OperatorContext, task: string): Promise<boolean> {
  const pauses = requirePauses(ctx.sources, task);
  return auditedCall(
    ctx,
    { action: "queues.resume", ids: [], filter: { task } },
    () => storeCall(ctx.sources, "resuming the task", () => pauses.resume({ task })),
    (wasPaused) => ({ paused: false, wasPaused }),
  );
}

/** Pauses every task of a named queue; the other queues keep running. */
export async function pauseQueue(ctx: OperatorContext, name: string): Promise<PausedTask[]> {
  const targets = queueTasks(ctx.sources, name);
  return auditedCall(
    ctx,
    { action: "queues.pause", ids: [], filter: { queue: name } },
    () => storeCall(ctx.sources, "pausing the queue", () => Promise.all(targets.map((t) => t.pauses.pause({ task: t.task, by: ctx.principal.name })))),
    (paused) => ({ paused: true, tasks: paused.map((p) => p.task) }),
  );
}

/** Resumes every task of a named queue; answers, per task, whether it was paused. */
export async function resumeQueue(ctx: OperatorContext, name: string): Promise<{ tasks: string[]; resumed: number }> {
  const targets = queueTasks(ctx.sources, name);
  const was = await auditedCall(
    ctx,
    { action: "queues.resume", ids: [], filter: { queue: name } },
    () => storeCall(ctx.sources, "resuming the queue", () => Promise.all(targets.map((t) => t.pauses.resume({ task: t.task })))),
    (resumed) => ({ paused: false, resumed: resumed.filter(Boolean).length }),
  );
  return { tasks: targets.map((t) => t.task), resumed: was.filter(Boolean).length };
}

/** Every registered task of a named queue, with the paused-task store of that queue. */
function queueTasks(sources: AdminSources, name: string) {
  const queue = queueScope(requireQueue(sources), name);
  if (!queue.pauses) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: pauseUnsupportedReason({ backend: queue.backend, pauses: null })! });
  }
  const pauses = queue.pauses;
  return sources.registry.tasksIn(name).map((t) => ({ task: t.name, pauses }));
}

function requirePauses(sources: AdminSources, task: string) {
  const queue = requireQueue(sources);
  const registered = sources.registry.all().map((t) => t.name);
  if (!registered.includes(task)) {
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: `no task named "${task}" is registered in the service "${sources.service.name}"; registered tasks: ${registered.sort().join(", ") || "(none)"}`,
    });
  }
  // A task's pause lives with its own named queue.
  const own = queue.queueOf(task);
  if (!own.pauses) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: pauseUnsupportedReason({ backend: own.backend, pauses: null })! });
  }
  return own.pauses;
}

function storeCall<T>(sources: AdminSources, what: string, fn: () => Promise<T>): Promise<T> {
  return backendCall(requireQueue(sources), what, fn);
}
