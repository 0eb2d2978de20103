import type { TaskRegistry } from "../core/registry.js";
import type { JfastConfig } from "../config/load-config.js";
import { createReadiness } from "../http/readiness.js";
import type { Logger } from "../observability/logger.js";
import type { Outbox } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { createMemoryAuditLog, type AuditLog } from "./audit.js";
import { createAdminHandler } from "./handler.js";
import { createReplayLog } from "./replays.js";
import { createSqlAuditLog } from "./sql-audit.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { contractsSourceFor } from "./contracts-source.js";
import { scheduleSourceFrom } from "./scheduler-source.js";
import type { AdminSources, ContractsSource, ScheduleSource } from "./sources.js";
import { createRepairs, type AdminRepairs } from "./repairs.js";
import type { SchedulerStatus } from "../scheduler/scheduler.js";
import type { EventsBus } from "../kafka/events-bus.js";
import { createRedaction } from "./redact.js";
import { createKeyring } from "../core/crypto/keyring.js";
import { createScanLimiter } from "./scan-limit.js";

/** The admin API of a running app: its HTTP handler, and its repairs for a program in the same process. */
export interface AdminService {
  handle(request: Request): Promise<Response>;
  repairs(actor: string): AdminRepairs;
}

/**
 * Builds the /jfast/admin handler (and the repairs) from the running app. Called by the composition root on the
 * first admin request or repair, so services that never use the admin API never load tRPC.
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
}): AdminService {
  const { config, logger } = params;
  const events = () => (params.provider("events") as EventsBus | undefined) ?? null;
  const schedulerProvider = () => (params.provider("scheduler") as { status(): SchedulerStatus } | undefined) ?? null;
  const readiness = createReadiness({ config, queue: params.queue, outbox: params.outbox, events, scheduler: schedulerProvider });
  const contracts = contractsSourceFor({ root: config.root, registry: params.registry });
  if (config.admin.tokens.length === 0) {
    logger.warn("the admin API at /jfast/admin has no tokens and refuses every call; set JFAST_ADMIN_TOKENS (jfast docs admin-api)");
  }
  const sources: AdminSources = {
    service: { name: config.service.name, environment: config.service.environment },
    plugins: [...config.plugins],
    registry: params.registry,
    queue: params.queue,
    outbox: params.outbox,
    readiness: () => readiness.check(),
    scheduler: () => {
      const scheduler = params.provider("scheduler") as Partial<ScheduleSource> & { status?(): SchedulerStatus } | undefined;
      if (!scheduler) return null;
      if (typeof scheduler.describeSchedules === "function") return scheduler as ScheduleSource;
      return typeof scheduler.status === "function" ? scheduleSourceFrom(scheduler as { status(): SchedulerStatus }) : ({} as ScheduleSource);
    },
    contracts: () => (params.provider("contracts") as ContractsSource | undefined) ?? contracts,
    events,
    disabledPlugins: [...config.disabledPlugins],
    queueConfig: config.queue,
    audit: params.audit ?? auditLogFor(() => params.provider("database") as DatabaseProvider | undefined, logger),
    replays: createReplayLog({ logger }),
    scans: createScanLimiter({ calls: config.admin.scanCalls }),
    redaction: createRedaction({ fields: config.admin.redact, defaults: config.admin.redactDefaults }),
    logger,
  };
  return {
    handle: createAdminHandler({ tokens: config.admin.tokens, maxBodyBytes: config.admin.maxBodyBytes, keyring: createKeyring(config.encryption.keys), sources }),
    repairs: (actor) => createRepairs(sources, actor),
  };
}

/**
 * In the database when the service has one (it survives restarts, every replica shares it); else in memory
 * and in the logs. Resolved per call: the database opens at jfast.start(), possibly after the first request.
 */
function auditLogFor(database: () => DatabaseProvider | undefined, logger: Logger): AuditLog {
  const memory = createMemoryAuditLog({ logger });
  let sql: { db: DatabaseProvider["sql"]; log: AuditLog } | null = null;
  const current = (): AuditLog => {
    const db = database()?.sql;
    if (!db) return memory;
    if (sql?.db !== db) sql = { db, log: createSqlAuditLog({ db, logger }) };
    return sql.log;
  };
  return {
    get kind() {
      return current().kind;
    },
    record: (entry) => current().record(entry),
    begin: (entry) => current().begin(entry),
    list: (params) => current().list(params),
    forJob: (params) => current().forJob(params),
  };
}
