import { AsyncLocalStorage } from "node:async_hooks";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { importDriver } from "../core/import-driver.js";
import type { SqlDatabase, SqlExecutor } from "../core/sql-port.js";
import { BackendError } from "../errors/jfast-error.js";
import { searchPath } from "./pg-database.js";
import { rowsOf } from "./rows-of.js";

export interface PgliteDatabase extends SqlDatabase {
  readonly driver: "pglite";
  /** The PGlite instance to hand to drizzle: guarded like the port (see `TransactionGuard`). */
  readonly client: PGlite;
}

/**
 * The SqlDatabase port over embedded PGlite. PGlite is one connection: a transaction holds it until it
 * ends, and any other statement waits. A statement issued *from inside* a transaction but outside it
 * (`queue.enqueue(job)` in a handler's session, a second `database.transaction()` nested in the first)
 * would wait for the transaction that is waiting for it: a silent deadlock. The guard turns that into an
 * error naming the fix. On a real server the same code opens a second connection and works.
 */
export async function createPgliteDatabase(params: {
  /** A directory, or "memory://" for a throw-away database. */
  dataDir?: string;
  /** A tarball from `dumpDataDir()` to start from (tests: skips initdb). */
  loadDataDir?: Blob | File;
  schema: string;
}): Promise<PgliteDatabase> {
  const { PGlite } = await importDriver("@electric-sql/pglite", () => import("@electric-sql/pglite"));
  const pglite = await PGlite.create({
    ...(params.dataDir ? { dataDir: params.dataDir } : {}),
    ...(params.loadDataDir ? { loadDataDir: params.loadDataDir } : {}),
  });
  // One connection, so one SET lasts for the life of the database.
  await pglite.exec(`SET search_path TO ${searchPath(params.schema)}`);
  return wrapPglite(pglite);
}

export function wrapPglite(pglite: PGlite): PgliteDatabase {
  const guard = new TransactionGuard();
  const executor = (tx: Transaction): SqlExecutor => ({
    async query(text, values) {
      return values && values.length > 0 ? rowsOf(await tx.query(text, values as unknown[])) : rowsOf(await tx.exec(text));
    },
  });
  return {
    driver: "pglite",
    client: guard.wrap(pglite),
    async query(text, values) {
      guard.check();
      // Without parameters, exec: migrations are several statements in one string.
      return values && values.length > 0 ? rowsOf(await pglite.query(text, values as unknown[])) : rowsOf(await pglite.exec(text));
    },
    async transaction(fn) {
      guard.check();
      return pglite.transaction((tx) => guard.run(() => fn(executor(tx))));
    },
    async listen(channel, onNotify) {
      guard.check();
      const unlisten = await pglite.listen(channel, onNotify);
      return async () => {
        if (!pglite.closed) await unlisten();
      };
    },
    async close() {
      if (!pglite.closed) await pglite.close();
    },
  };
}

class TransactionGuard {
  private readonly storage = new AsyncLocalStorage<{ open: boolean }>();

  check(): void {
    if (this.storage.getStore()?.open) {
      throw new BackendError("this statement would wait forever: it runs inside a transaction on the embedded database, but outside that transaction", {
        code: "EMBEDDED_DATABASE_BUSY",
        hint: "inside a transaction, write through the transaction itself: outbox.enqueue(session, job) instead of queue.enqueue(job), and session/tx queries instead of the top-level db; or set DATABASE_URL to use a PostgreSQL server",
        docs: "jfast docs postgres#embedded-database",
      });
    }
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    // A flag object rather than the mere presence of a store: callbacks scheduled inside the transaction
    // but run after it ended (a timer) must not be refused.
    const store = { open: true };
    return this.storage.run(store, async () => {
      try {
        return await fn();
      } finally {
        store.open = false;
      }
    });
  }

  /** The same PGlite, with top-level query/exec/transaction refused inside a transaction (for drizzle). */
  wrap(pglite: PGlite): PGlite {
    return new Proxy(pglite, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "query" || property === "exec" || property === "sql") {
          return async (...args: unknown[]) => {
            this.check();
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        if (property === "transaction") {
          return async (callback: (tx: Transaction) => Promise<unknown>) => {
            this.check();
            return target.transaction((tx) => this.run(() => callback(tx)));
          };
        }
        // PGlite keeps state in private fields: methods must run with the real instance as `this`.
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  }
}
