import type { TaskRegistry } from "../core/registry.js";
import type { JfastConfig } from "../config/load-config.js";
import { createReadiness } from "../http/readiness.js";
import type { Logger } from "../observability/logger.js";
import type { Outbox } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { createMemoryAuditLog, type AuditLog } from "./audit.js";
import { createAdminHandler } from "./handler.js";
import type { ContractsSource, ScheduleSource } from "./sources.js";

/**
 * Builds the /jfast/admin handler from the running app. Called by the composition root on the first admin
 * request, so services that never open the admin API never load tRPC.
 */
export function createAdmin(params: {
  config: JfastConfig;
  registry: TaskRegistry;
  logger: Logger;
  queue: () => QueueProvider | null;
  outbox: () => Outbox | null;
  /** A started provider by name, or undefined (the scheduler and contracts checker register themselves). */
  provider: (name: string) => unknown;
  audit?: AuditLog;
}): (request: Request) => Promise<Response> {
  const { config, logger } = params;
  const readiness = createReadiness({ config, queue: params.queue, outbox: params.outbox });
  if (config.admin.tokens.length === 0) {
    logger.warn("the admin API at /jfast/admin has no tokens and refuses every call; set JFAST_ADMIN_TOKENS (docs/admin-api.md)");
  }
  return createAdminHandler({
    tokens: config.admin.tokens,
    sources: {
      service: { name: config.service.name, environment: config.service.environment },
      plugins: [...config.plugins],
      registry: params.registry,
      queue: params.queue,
      outbox: params.outbox,
      readiness: () => readiness.check(),
      scheduler: () => (params.provider("scheduler") as ScheduleSource | undefined) ?? null,
      contracts: () => (params.provider("contracts") as ContractsSource | undefined) ?? null,
      audit: params.audit ?? createMemoryAuditLog({ logger }),
      redactFields: config.admin.redact,
      logger,
    },
  });
}
