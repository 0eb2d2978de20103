import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { DatabaseConfig } from "./config.js";
import { currentTenantId } from "../context/context.js";
import { importDriver } from "../core/import-driver.js";
import type { SqlDatabase } from "../core/sql-port.js";
import type { Logger } from "../observability/logger.js";
import type { Database, DatabaseProvider, TaskSession } from "./database-provider.js";
import { executorFor } from "./executor-for.js";
import { startInboxPruner } from "./inbox-pruner.js";
import { migrate } from "./migrate.js";
import { drizzleOrm, importDrizzleEntry, requireDrizzle } from "./optional-drizzle.js";
import { createReplicaReader } from "./replica-reader.js";

/**
 * `[plugin.database]`: with a url (or DATABASE_URL), node-postgres with a pool of `pool_size`; without,
 * embedded PGlite under `<root>/.jfast/pglite`. Both speak the same SQL through the same port, so the
 * queue, inbox and outbox run one code path. Migrations run here, before anything else touches the schema.
 */
export async function openDatabase(params: { config: DatabaseConfig; root: string; logger: Logger }): Promise<DatabaseProvider> {
  const { config, logger } = params;
  const opened = config.url === null ? await openEmbedded(params) : await openServer(config, logger);
  try {
    await migrate({ db: opened.sql, schema: config.schema, logger });
  } catch (error) {
    await opened.close();
    throw error;
  }
  return createDatabaseProvider({ ...opened, config, logger });
}

interface Opened {
  sql: SqlDatabase;
  /** The read replica's connection (`read_url`), when there is one. */
  replica?: SqlDatabase;
  db: Database;
  close(): Promise<void>;
  /** Driver errors on the drizzle path, translated like the port's. */
  translate?: (error: unknown) => unknown;
}

async function openServer(config: DatabaseConfig, logger: Logger): Promise<Opened> {
  const [{ createPgDatabase }, { translateConnectionError }, drizzle] = await Promise.all([
    import("./pg-database.js"),
    import("./connection-errors.js"),
    importDrizzleEntry(() => importDriver("pg", () => import("drizzle-orm/node-postgres"))),
  ]);
  const url = config.url!;
  const sql = createPgDatabase({ url, schema: config.schema, poolSize: config.poolSize, logger });
  // The replica's pool opens connections on the first read only; it never LISTENs (a standby refuses LISTEN).
  const replica = config.readUrl ? createPgDatabase({ url: config.readUrl, schema: config.schema, poolSize: config.poolSize, logger }) : undefined;
  return {
    sql,
    ...(replica ? { replica } : {}),
    db: drizzle ? drizzle.drizzle({ client: sql.pool }) : withoutDrizzle(),
    close: async () => {
      await Promise.all([sql.close(), replica?.close()]);
    },
    translate: (error) => translateConnectionError(error, url),
  };
}

async function openEmbedded(params: { config: DatabaseConfig; root: string; logger: Logger }): Promise<Opened> {
  const [{ createPgliteDatabase }, { lockDataDir }, drizzle] = await Promise.all([
    import("./pglite-database.js"),
    import("./pglite-lock.js"),
    importDrizzleEntry(() => importDriver("@electric-sql/pglite", () => import("drizzle-orm/pglite"))),
  ]);
  const home = path.join(params.root, ".jfast");
  await mkdir(home, { recursive: true });
  const unlock = await lockDataDir(path.join(home, "pglite.lock"));
  try {
    const dataDir = path.join(home, "pglite");
    params.logger.debug("opening the embedded database", { data_dir: dataDir });
    const sql = await createPgliteDatabase({ dataDir, schema: params.config.schema });
    return {
      sql,
      db: drizzle ? drizzle.drizzle({ client: sql.client }) : withoutDrizzle(),
      async close() {
        await sql.close();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** The provider over an opened, migrated database. Exported for tests that bring their own PGlite. */
export function createDatabaseProvider(params: Opened & { config: DatabaseConfig; logger: Logger }): DatabaseProvider {
  const { sql, db, config, logger } = params;
  const reader = params.replica ? createReplicaReader({ replica: params.replica, primary: sql, logger }) : sql;
  const pruner = startInboxPruner({ db: sql, retentionDays: config.inboxRetentionDays, logger });
  let closed: Promise<void> | null = null;
  return {
    driver: sql.driver,
    schema: config.schema,
    db,
    sql,
    reader,
    readsFromReplica: params.replica !== undefined,
    rls: config.rls,
    async transaction(fn, options) {
      // Only driver failures are translated; what the caller's own code threw passes through untouched.
      let thrownByFn: { error: unknown } | null = null;
      try {
        return await runTransaction(async (tx) => {
          try {
            return await fn(tx);
          } catch (error) {
            thrownByFn = { error };
            throw error;
          }
        }, options);
      } catch (error) {
        if ((thrownByFn as { error: unknown } | null)?.error === error || !params.translate) throw error;
        throw params.translate(error);
      }
    },
    executorFor,
    pruneInbox: () => pruner.prune(),
    close() {
      closed ??= (async () => {
        await pruner.stop();
        await params.close();
      })();
      return closed;
    },
  };

  function runTransaction<T>(fn: (session: TaskSession) => Promise<T>, options?: { tenantId?: string | null }): Promise<T> {
    const tenant = () => {
      const given = options !== undefined && "tenantId" in options;
      return (given ? options.tenantId : currentTenantId()) ?? "";
    };
    // is_local = true: the setting ends with this transaction, so a pooled connection never carries one tenant
    // into the next borrower's work. No tenant means '' — policies comparing against it match no row, which is
    // the safe way to be wrong.
    if (!drizzleOrm) {
      // Without drizzle-orm the session is jfast's own executor on the transaction's connection: query(text, params).
      return sql.transaction(async (tx) => {
        if (config.rls) await tx.query("select set_config('jfast.tenant_id', $1, true)", [tenant()]);
        return fn(tx as unknown as TaskSession);
      });
    }
    return db.transaction(async (tx) => {
      if (config.rls) await tx.execute(drizzleOrm!.sql`select set_config('jfast.tenant_id', ${tenant()}, true)`);
      return fn(tx);
    });
  }
}

/** `database.db` when drizzle-orm is not installed: every use says what to install. */
function withoutDrizzle(): Database {
  return new Proxy({} as Database, {
    get(_target, property) {
      if (property === "then" || typeof property === "symbol") return undefined;
      return requireDrizzle(`require("database").db.${String(property)}`);
    },
  });
}
