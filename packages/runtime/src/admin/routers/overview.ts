import { z } from "zod";
import type { Depths } from "../../core/queue-backend.js";
import { MINUTE_MS } from "../../core/throughput.js";
import { DEFAULT_QUEUE } from "../../core/named-queue.js";
import { THROUGHPUT_FLUSH_MS } from "../../queue/throughput-recorder.js";
import { backendCall } from "../queue-access.js";
import { queueInput, queueScope } from "../queue-scope.js";
import type { ReadinessReport } from "../../http/readiness.js";
import { router, viewerProcedure } from "../trpc.js";

export interface OverviewView {
  service: string;
  environment: string;
  plugins: string[];
  you: { name: string; role: "viewer" | "operator" };
  readiness: ReadinessReport;
  queue:
    | { enabled: false }
    | {
        enabled: true;
        backend: string;
        name: string;
        /** Every named queue together. */
        depths: Depths | null;
        /** Each named queue's depths, `default` first (docs/queues.md#admin-api); null when counting failed. */
        queues?: Array<{ name: string; depths: Depths }> | null;
        /**
         * The newest dead letter's id and death time (null when there is none): with the dead count, what tells a
         * client its dead-letter views are out of date, without reading them (docs/dashboard.md#live-data).
         */
        newestDead?: { id: string; diedAt: string } | null;
        error: string | null;
      };
  /** `queue`: the named queue the task's jobs go to. */
  tasks: { name: string; module: string | null; maxAttempts: number | null; queue?: string }[];
  auditStore: "memory" | "sql";
}

export interface ThroughputView {
  enabled: boolean;
  /** One point per minute, oldest first, zero-filled; the last is the current minute (still counting). */
  points: Array<{ minute: string; processed: number; failed: number; dead: number }>;
  stored: "sql" | "redis" | "memory";
  /** Counts are not kept per tenant: a `tenant` in the input is accepted and ignored. */
  perTenant: false;
  /** How often each process adds its counts: the current minute lags by up to this. */
  flushSeconds: number;
}

export const overviewRouter = router({
  /** Health as /ready reports it, depths, registered tasks, and the caller's role. */
  get: viewerProcedure.query(async ({ ctx }): Promise<OverviewView> => {
    const { sources, principal } = ctx;
    const queue = sources.queue();
    const readiness = await sources.readiness();
    let queueView: OverviewView["queue"] = { enabled: false };
    if (queue) {
      try {
        // The readiness check has just counted them (shared for a second): counting a large backlog again per
        // call is what the dashboard's 2-second refresh must not cost. Counted here only when the check failed.
        const depths = depthsIn(readiness.checks.queue) ?? (await queue.depths());
        // One queue: its depths are the ones just read; several are each counted (one call per queue).
        const queues =
          queue.queues.size === 1
            ? [{ name: DEFAULT_QUEUE, depths }]
            : Object.entries(await queue.depthsByQueue()).map(([name, d]) => ({ name, depths: d }));
        // One row by the dead letters' newest-first index, read only when there is one.
        const newest = depths.dead > 0 ? (await queue.backend.listDead({ limit: 1 }))[0] : undefined;
        const newestDead = newest ? { id: newest.job.id, diedAt: newest.diedAt } : null;
        queueView = { enabled: true, backend: queue.backend.kind, name: queue.name, depths, queues, newestDead, error: null };
      } catch (error) {
        queueView = { enabled: true, backend: queue.backend.kind, name: queue.name, depths: null, queues: null, error: (error as Error).message };
      }
    }
    return {
      service: sources.service.name,
      environment: sources.service.environment,
      plugins: [...sources.plugins],
      you: principal,
      readiness,
      queue: queueView,
      tasks: sources.registry.all().map((t) => ({ name: t.name, module: t.module, maxAttempts: t.options.maxAttempts ?? null, queue: sources.registry.queueOf(t.name) })),
      auditStore: sources.audit.kind,
    };
  }),
  /**
   * Jobs processed (completed), failed (attempts that threw or timed out) and dead-lettered per minute, over the
   * last `minutes`, summed over tasks or of one task; kept 7 days (core/throughput.ts).
   */
  throughput: viewerProcedure
    .input(
      z
        .strictObject({
          minutes: z.number().int().min(1).max(1440).default(60),
          task: z.string().min(1).max(200).optional(),
          tenant: z.string().min(1).max(200).optional(),
          queue: queueInput,
        })
        .prefault({}),
    )
    .query(async ({ ctx, input }): Promise<ThroughputView> => {
      const now = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
      const from = now - (input.minutes - 1) * MINUTE_MS;
      const service = ctx.sources.queue();
      const queue = service && queueScope(service, input.queue);
      const recorder = queue?.throughput ?? null;
      const rows = queue && recorder ? await backendCall(queue, "reading throughput", () => recorder.store.read({ from, task: input.task })) : [];
      const byMinute = new Map(rows.map((r) => [r.minute, r]));
      const points = Array.from({ length: input.minutes }, (_, i) => {
        const minute = from + i * MINUTE_MS;
        const row = byMinute.get(minute);
        return { minute: new Date(minute).toISOString(), processed: row?.processed ?? 0, failed: row?.failed ?? 0, dead: row?.dead ?? 0 };
      });
      return { enabled: recorder !== null, points, stored: recorder?.store.kind ?? "memory", perTenant: false, flushSeconds: THROUGHPUT_FLUSH_MS / 1000 };
    }),
  whoami: viewerProcedure.query(({ ctx }) => ({ service: ctx.sources.service.name, ...ctx.principal })),
  /** The registered task names, sorted (the dashboard's filters suggest them); reads no backend. */
  tasks: viewerProcedure.query(({ ctx }): { tasks: string[] } => ({ tasks: ctx.sources.registry.all().map((t) => t.name).sort() })),
});

/** The depths a readiness report's queue check carries, when it counted them. */
function depthsIn(check: ReadinessReport["checks"][string] | undefined): Depths | null {
  if (!check) return null;
  const { ready, scheduled, running, dead, estimated } = check;
  if ([ready, scheduled, running, dead].every((n) => typeof n === "number")) {
    return { ready, scheduled, running, dead, ...(estimated === true ? { estimated } : {}) } as Depths;
  }
  return null;
}
