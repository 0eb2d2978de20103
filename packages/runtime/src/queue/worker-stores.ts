import { readFileSync } from "node:fs";
import { createSqlWorkerStore, type WorkerStore } from "../core/backend/workers.js";
import type { SqlExecutor } from "../core/sql-port.js";

// The PostgreSQL queue's own statements: jfast_workers is the same table, written and read the same way.
const sql = (name: string) => readFileSync(new URL(`../backends/postgres/sql/${name}.sql`, import.meta.url), "utf8");
const SQL = { upsert: sql("upsert-worker"), remove: sql("remove-worker"), list: sql("list-workers") } as const;

/** The worker registry of a queue kept in the service's database (RabbitMQ's): jfast_workers, migration 0028. */
export function createDatabaseWorkerStore(params: { db: SqlExecutor; queue: string }): WorkerStore {
  return createSqlWorkerStore({ ...params, sql: SQL });
}
