import type { Depths } from "../../core/queue-backend.js";
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
    | { enabled: true; backend: string; name: string; depths: Depths | null; error: string | null };
  tasks: { name: string; module: string | null; maxAttempts: number | null }[];
  auditStore: "memory" | "sql";
}

export const overviewRouter = router({
  /** Health as /ready reports it, depths, registered tasks, and the caller's role. */
  get: viewerProcedure.query(async ({ ctx }): Promise<OverviewView> => {
    const { sources, principal } = ctx;
    const queue = sources.queue();
    let queueView: OverviewView["queue"] = { enabled: false };
    if (queue) {
      try {
        queueView = { enabled: true, backend: queue.backend.kind, name: queue.name, depths: await queue.depths(), error: null };
      } catch (error) {
        queueView = { enabled: true, backend: queue.backend.kind, name: queue.name, depths: null, error: (error as Error).message };
      }
    }
    return {
      service: sources.service.name,
      environment: sources.service.environment,
      plugins: [...sources.plugins],
      you: principal,
      readiness: await sources.readiness(),
      queue: queueView,
      tasks: sources.registry.all().map((t) => ({ name: t.name, module: t.module, maxAttempts: t.options.maxAttempts ?? null })),
      auditStore: sources.audit.kind,
    };
  }),
  whoami: viewerProcedure.query(({ ctx }) => ({ service: ctx.sources.service.name, ...ctx.principal })),
});
