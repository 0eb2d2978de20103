import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { SqlDatabase, SqlExecutor } from "../core/sql-port.js";
import type { TaskSession } from "../core/task-session.js";

export type { TaskSession } from "../core/task-session.js";

/**
 * The drizzle database `require("database").db` is: node-postgres or PGlite underneath, so typed as what both
 * are, drizzle's PostgreSQL database without a relational schema (query builders take your own tables).
 */
export type Database = PgDatabase<PgQueryResultHKT>;



/**
 * `jfast.require("database")`: the primary database, over node-postgres (with a url) or embedded PGlite.
 * `transaction(fn)` hands `fn` a drizzle transaction; with `[plugin.database] rls = true` the transaction
 * is scoped to the tenant (`SET LOCAL`), taken from the current request or job unless given.
 */
export interface DatabaseProvider {
  readonly driver: "pg" | "pglite";
  readonly schema: string;
  /** The drizzle database (node-postgres or PGlite flavour). */
  readonly db: Database;
  /** The raw port every jfast SQL statement goes through. */
  readonly sql: SqlDatabase;
  /**
   * Where the admin API's and /metrics' reads go: the replica of `[plugin.database] read_url` (falling back to
   * the primary while it cannot be reached), else `sql`. Never for anything that must see its own writes.
   */
  readonly reader: SqlExecutor;
  /** Whether `reader` is a replica (read_url is set). */
  readonly readsFromReplica: boolean;
  transaction<T>(fn: (session: TaskSession) => Promise<T>, options?: { tenantId?: string | null }): Promise<T>;
  /** Turns a caller's session (drizzle transaction, or a pg client inside BEGIN) into an executor. */
  executorFor(session: unknown): SqlExecutor;
  /** Whether transactions set `jfast.tenant_id` for row-level-security policies. */
  readonly rls: boolean;
  /** Deletes inbox keys past `inbox_retention_days` now (it also runs periodically); returns how many. */
  pruneInbox(): Promise<number>;
  close(): Promise<void>;
}
