import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { ErrorCode } from "../../errors/codes.js";
import type { Depths, TaskDepths } from "../../core/queue-backend.js";
import type { PausedTask } from "../../core/pause.js";
import { pauseUnsupportedReason } from "../../queue/queue-control.js";
import { pauseQueue, pauseTask, resumeQueue, resumeTask } from "../operations/pause-tasks.js";
import { backendCall, requireQueue } from "../queue-access.js";
import { queueInput, queueScope } from "../queue-scope.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import type { AdminSources } from "../sources.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";
import { tenantDepths, type TenantDepthsView } from "../tenant-depths.js";

export interface QueueTaskView extends Depths {
  task: string;
  /** The named queue its jobs go to (docs/queues.md). */
  queue: string;
  /** The module that registers it; null for a task with jobs but no handler in this service. */
  module: string | null;
  paused: boolean;
  pausedAt: string | null;
  pausedBy: string | null;
}

/** One named queue: its depths, slots per worker and whether workers run it (docs/queues.md#admin-api). */
export interface NamedQueueView extends Depths {
  name: string;
  /** What the backend calls it (table rows, Redis hash tag, RabbitMQ queue). */
  backendName: string;
  concurrency: number;
  maxAttempts: number;
  /** `[queues.<name>] paused = true`: workers do not run it. */
  pausedInConfig: boolean;
  /** Tasks of this queue paused now. */
  pausedTasks: number;
}

export interface QueuesView {
  enabled: boolean;
  /** The named queues, `default` first (only the one asked for when `queue` is given). */
  queues: NamedQueueView[];
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
/** Every task a named queue declares (docs/queues.md#admin-api). */
const queueNameInput = z.strictObject({ queue: z.string().min(1).max(40) });

export const queuesRouter = router({
  /** Depths per named queue and per task, paused or not, optionally of one queue or one tenant's jobs. */
  list: viewerProcedure
    .input(z.strictObject({ tenant: z.string().min(1).max(200).optional(), queue: queueInput }).optional())
    .query(async ({ ctx, input }): Promise<QueuesView> => {
      const service = ctx.sources.queue();
      if (!service) {
        return { enabled: false, queues: [], tasks: [], countsAre: "exact", countsUnavailableReason: null, pauseSupported: false, pauseUnsupportedReason: null, pauseStore: null };
      }
      // queueScope refuses a queue the service does not have.
      const names = input?.queue !== undefined ? [input.queue] : [...service.queues.keys()];
      const views = await Promise.all(names.map((name) => queueView(ctx.sources, queueScope(service, name), name, input?.tenant)));
      const unavailable = views.find((v) => v.unavailable !== null)?.unavailable ?? null;
      const reason = pauseUnsupportedReason({ backend: service.backend, pauses: service.pauses });
      return {
        enabled: true,
        queues: views.map((v) => v.summary),
        tasks: views.flatMap((v) => v.tasks),
        countsAre: views.every((v) => v.exact && !v.summary.estimated) ? "exact" : "estimated",
        countsUnavailableReason: unavailable,
        pauseSupported: reason === null,
        pauseUnsupportedReason: reason,
        pauseStore: service.pauses?.store.kind ?? null,
      };
    }),

  /**
   * Per-tenant depths and the wait of each tenant's oldest due job (docs/flow-control.md#outbox-and-events), from a
   * bounded window of each state: how a queue shares its claims across tenants, seen from outside.
   */
  tenants: viewerProcedure.input(z.strictObject({ queue: queueInput }).optional()).query(async ({ ctx, input }): Promise<TenantDepthsView & { enabled: boolean }> => {
    const service = ctx.sources.queue();
    if (!service) return { enabled: false, supported: false, reason: null, tenants: [], exact: true, window: 0 };
    return { enabled: true, ...(await tenantDepths(queueScope(service, input?.queue))) };
  }),

  /** Pauses every task of a named queue, as `pause` does one task; the other queues keep running. */
  pauseQueue: operatorProcedure.input(queueNameInput).mutation(async ({ ctx, input }) => {
    const entries = await pauseQueue(ctx, input.queue);
    return { queue: input.queue, paused: true, tasks: entries.map((e) => e.task) };
  }),

  /** Stops every worker of the service from starting the task's jobs (docs/worker.md#pausing-a-task). */
  pause: operatorProcedure.input(taskInput).mutation(async ({ ctx, input }) => {
    const entry = await pauseTask(ctx, input.task);
    return { task: input.task, paused: true, pausedAt: entry.pausedAt, pausedBy: entry.pausedBy };
  }),

  /** Resumes every task of a named queue. */
  resumeQueue: operatorProcedure.input(queueNameInput).mutation(async ({ ctx, input }) => {
    const { resumed } = await resumeQueue(ctx, input.queue);
    return { queue: input.queue, paused: false, resumed };
  }),

  /** Lets workers start the task's jobs again; the ones queued meanwhile run in their usual order. */
  resume: operatorProcedure.input(taskInput).mutation(async ({ ctx, input }) => {
    return { task: input.task, paused: false, wasPaused: await resumeTask(ctx, input.task) };
  }),
});

/** One named queue's task depths and summary. */
async function queueView(sources: AdminSources, queue: QueueProvider, name: string, tenant: string | undefined) {
  const [counted, paused, depths] = await Promise.all([
    queue.backend.depthsByTask(tenant ? { tenantId: tenant } : {}).then(
      (byTask) => ({ byTask, unavailable: null as string | null }),
      (error: unknown) => {
        if ((error as { code?: unknown }).code === ErrorCode.NOT_SUPPORTED) {
          return { byTask: { tasks: {}, exact: false } as TaskDepths, unavailable: (error as Error).message.split("\n")[0]! };
        }
        throw backendFailure(queue.backend.kind, error);
      },
    ),
    queue.pauses ? backendCall(queue, "reading paused tasks", () => queue.pauses!.store.list()) : Promise.resolve([] as PausedTask[]),
    backendCall(queue, "counting depths", () => queue.depths()),
  ]);
  const pausedByTask = new Map(paused.map((p) => [p.task, p]));
  const own = sources.registry.tasksIn(name);
  const modules = new Map(own.map((t) => [t.name, t.module]));
  const names = [...new Set([...modules.keys(), ...Object.keys(counted.byTask.tasks), ...pausedByTask.keys()])].sort();
  const config = sources.queueConfig?.queues.find((q) => q.name === name);
  return {
    unavailable: counted.unavailable,
    exact: counted.byTask.exact,
    summary: {
      name,
      backendName: queue.queues.get(name)?.backendName ?? queue.name,
      ...depths,
      concurrency: config?.concurrency ?? 0,
      maxAttempts: config?.maxAttempts ?? 0,
      pausedInConfig: config?.paused ?? false,
      pausedTasks: paused.length,
    } satisfies NamedQueueView,
    tasks: names.map((task): QueueTaskView => {
      const taskDepths = counted.byTask.tasks[task] ?? { ready: 0, scheduled: 0, running: 0, dead: 0 };
      const pause = pausedByTask.get(task);
      return { task, queue: name, module: modules.get(task) ?? null, ...taskDepths, paused: Boolean(pause), pausedAt: pause?.pausedAt ?? null, pausedBy: pause?.pausedBy ?? null };
    }),
  };
}

function backendFailure(kind: string, error: unknown): TRPCError {
  return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `counting depths per task failed on the ${kind} queue: ${(error as Error).message}`, cause: error });
}
