import type pg from "pg";
import { importDriver } from "../core/import-driver.js";
import type { QueryOptions, SqlDatabase, SqlExecutor } from "../core/sql-port.js";
import type { Logger } from "../observability/logger.js";
import { translateConnectionError } from "./connection-errors.js";
import { PgListener } from "./pg-listener.js";
import { rowsOf } from "./rows-of.js";

const { default: pgDriver } = await importDriver("pg", () => import("pg"));

export interface PgDatabase extends SqlDatabase {
  readonly driver: "pg";
  readonly pool: pg.Pool;
}

/**
 * The SqlDatabase port over node-postgres: a pool for statements and transactions, plus one dedicated
 * connection for LISTEN. Every connection starts with `search_path = <schema>, public`, set as a startup
 * option so no statement can run before it.
 */
export function createPgDatabase(params: { url: string; schema: string; poolSize: number; logger: Logger }): PgDatabase {
  const { url, schema, logger } = params;
  const connection: pg.ClientConfig = {
    connectionString: url,
    options: `-c search_path=${searchPath(schema)}`,
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
    application_name: "jfast",
  };
  const pool = new pgDriver.Pool({ ...connection, max: params.poolSize, idleTimeoutMillis: 30_000 });
  // An idle pooled connection that dies (server restart, network) emits 'error' on the pool; unhandled, it
  // would crash the process. The pool drops the connection and the next query opens a fresh one.
  pool.on("error", (error) => logger.warn("an idle database connection failed; it was discarded", { error }));
  // A connection that dies while checked out (inside a transaction — a task session waiting on its handler —
  // when the server restarts) emits 'error' on the client, where the pool listens only while it is idle.
  // Unhandled, that event would kill the process. The statement in flight, or the next one, rejects on its own
  // (the caller sees a DATABASE_UNAVAILABLE error and the job is retried), and the pool discards the client
  // when it comes back, so the listener has nothing more to do.
  pool.on("connect", (client) => client.on("error", () => undefined));
  const listener = new PgListener({ createClient: () => new pgDriver.Client(connection), logger });
  const translate = (error: unknown) => translateConnectionError(error, url);

  const executor = (client: pg.PoolClient): SqlExecutor => ({
    async query(text, values, options) {
      try {
        return rowsOf(await client.query(statement(text, values, options)));
      } catch (error) {
        throw translate(error);
      }
    },
  });

  return {
    driver: "pg",
    pool,
    async query(text, values, options) {
      try {
        return rowsOf(await pool.query(statement(text, values, options)));
      } catch (error) {
        throw translate(error);
      }
    },
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw translate(error);
      }
      let broken: unknown;
      try {
        await client.query("BEGIN");
        const result = await fn(executor(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          // The connection itself is gone: do not hand it back to the pool.
          broken = rollbackError;
        }
        throw translate(error);
      } finally {
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    async listen(channel, onNotify) {
      try {
        return await listener.subscribe(channel, onNotify);
      } catch (error) {
        throw translate(error);
      }
    },
    async close() {
      await listener.close();
      await pool.end();
    },
  };
}

/** A named statement is prepared on each connection the first time it runs there, then only bound and executed. */
function statement(text: string, values: readonly unknown[] | undefined, options: QueryOptions | undefined): pg.QueryConfig {
  return { text, ...(values ? { values: values as unknown[] } : {}), ...(options?.name ? { name: options.name } : {}) };
}

/** `[plugin.database] schema` is validated as a plain identifier; public stays reachable for the service's own tables. */
export function searchPath(schema: string): string {
  // Interpolated into a startup option and into SET: only plain identifiers (as jfast.toml enforces).
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name "${schema}": use lower-case letters, digits and _`);
  return schema === "public" ? "public" : `${schema},public`;
}
