import type { TaskRegistry } from "../core/registry.js";
import type { JfastConfig } from "../config/load-config.js";
import { createReadiness } from "../http/readiness.js";
import type { Logger } from "../observability/logger.js";
import { createMemoryAuditLog, type AuditLog } from "./audit.js";
import { createAdminHandler } from "./handler.js";
import { createReplayLog } from "./replays.js";
import { createSqlAuditLog } from "./sql-audit.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import type { RunningPlugins } from "../plugins/plugin.js";
import { contractsSourceFor } from "./contracts-source.js";
import { scheduleSourceFrom } from "./scheduler-source.js";
import type { AdminSources } from "./sources.js";
import { createRepairs, type AdminRepairs } from "./repairs.js";
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
  /** What is running, read on each call: plugins start after the first request may have built the admin API. */
  running: RunningPlugins;
  audit?: AuditLog;
}): AdminService {
  const { config, logger, running } = params;
  const queue = () => running.get("queue")?.provider ?? null;
  const readiness = createReadiness({ config, running });
  const contracts = contractsSourceFor({ root: config.root, registry: params.registry });
  if (config.admin.tokens.length === 0) {
    logger.warn("the admin API at /jfast/admin has no tokens and refuses every call; set JFAST_ADMIN_TOKENS (jfast docs admin-api)");
  }
  const sources: AdminSources = {
    service: { name: config.service.name, environment: config.service.environment },
    plugins: [...config.plugins],
    registry: params.registry,
    queue,
    alerts: () => running.get("queue")?.alerter ?? null,
    outbox: () => running.get("outbox"),
    readiness: () => readiness.check(),
    scheduler: () => {
      const scheduler = running.get("scheduler");
      return scheduler ? scheduleSourceFrom(scheduler) : null;
    },
    scheduleControl: async () => {
      const control = running.get("scheduler")?.control;
      if (control) return { control, close: async () => undefined };
      const service = queue();
      // The memory queue's store lives in the process that runs its scheduler: nobody else would read a change.
      if (!service || !config.queue || service.backend.kind === "memory") return null;
      const { openScheduleControl } = await import("../scheduler/start-scheduler.js");
      return openScheduleControl({ config, registry: params.registry, queue: service, database: running.get("database") ?? null });
    },
    database: () => running.get("database")?.sql ?? null,
    contracts: () => contracts,
    events: () => running.get("kafka"),
    disabledPlugins: [...config.disabledPlugins],
    queueConfig: config.queue,
    audit: params.audit ?? auditLogFor(() => running.get("database"), logger),
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
function auditLogFor(database: () => DatabaseProvider | null, logger: Logger): AuditLog {
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
