import { readFileSync } from "node:fs";
import type { SqlExecutor } from "../core/sql-port.js";
import type { Logger } from "../observability/logger.js";
import { AUDIT_MAX_IDS, complete, PENDING, type AuditEntry, type AuditLog } from "./audit.js";
import type { ActorRole } from "./tokens.js";

function loadSql(name: string): string {
  return readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
}

const INSERT = loadSql("insert-audit");
const LIST = loadSql("list-audit");
const FINISH = loadSql("finish-audit");
const FOR_JOB = loadSql("list-audit-for-job");

interface AuditRow {
  id: string;
  at: Date | string;
  actor: string;
  role: string;
  action: string;
  ids: string[];
  count: number;
  filter: Record<string, unknown> | null;
  outcome: Record<string, unknown>;
}

/**
 * The role column holds `<role>` for a call made with the caller's own token and `<role> via <dashboard token>`
 * for a person a dashboard forwarded: the table (migration 0005) keeps its columns, and the roles are fixed words
 * so the split is unambiguous.
 */
function storedRole(entry: AuditEntry): string {
  return entry.via ? `${entry.role} via ${entry.via}` : entry.role;
}

function readRole(value: string): { role: ActorRole; via: string | null } {
  const match = /^(viewer|operator|admin) via (.+)$/s.exec(value);
  return match ? { role: match[1] as ActorRole, via: match[2]! } : { role: value as ActorRole, via: null };
}

/**
 * The audit trail in the service's database (table jfast_admin_audit, migration 0005), so it survives
 * restarts and is shared by every replica. Each entry is also written as a log line.
 */
export function createSqlAuditLog(params: { db: SqlExecutor; logger: Logger }): AuditLog {
  const { db, logger } = params;
  const insert = (entry: AuditEntry) =>
    db.query(INSERT, [
      entry.id,
      entry.at,
      entry.actor,
      storedRole(entry),
      entry.action,
      JSON.stringify(entry.ids),
      entry.count,
      entry.filter === null ? null : JSON.stringify(entry.filter),
      JSON.stringify(entry.outcome),
    ]);
  return {
    kind: "sql",
    async record(input) {
      const entry = complete(input);
      await insert(entry);
      logger.info("admin action", { audit: entry });
      return entry;
    },
    async begin(input) {
      const entry = complete({ ...input, outcome: { ...PENDING } });
      await insert(entry);
      return {
        entry,
        async finish({ outcome, ids }) {
          const finished: AuditEntry = { ...entry, ...(ids ? { ids: ids.slice(0, AUDIT_MAX_IDS), count: ids.length } : {}), outcome };
          await db.query(FINISH, [entry.id, JSON.stringify(finished.ids), finished.count, JSON.stringify(outcome)]);
          logger.info("admin action", { audit: finished });
          return finished;
        },
      };
    },
    async list({ limit, before, tenant }) {
      return (await db.query<AuditRow>(LIST, [limit, before ?? null, tenant ?? null])).map(readEntry);
    },
    async forJob({ id, since, actions, limit }) {
      return (await db.query<AuditRow>(FOR_JOB, [id, since, [...actions], limit])).map(readEntry);
    },
  };
}

function readEntry(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    actor: r.actor,
    ...readRole(r.role),
    action: r.action,
    ids: r.ids,
    count: Number(r.count),
    filter: r.filter,
    outcome: r.outcome,
  };
}
