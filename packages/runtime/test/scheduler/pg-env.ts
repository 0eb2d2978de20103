import { randomUUID } from "node:crypto";
import { createPgDatabase, type PgDatabase } from "../../src/database/pg-database.js";
import { migrate, quoteIdent } from "../../src/database/migrate.js";
import { createLogger } from "../../src/observability/logger.js";

/** The real PostgreSQL these tests run against; a missing server fails them, it never skips them. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export const silent = createLogger({ service: "test", level: "silent" });

export function uniqueSchema(label: string): string {
  return `t_sched_${label}_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
}

/** A pool on its own schema, migrated. Several pools on one schema stand for several processes. */
export async function openPool(schema: string, poolSize = 10): Promise<PgDatabase> {
  const db = createPgDatabase({ url: DATABASE_URL, schema, poolSize, logger: silent });
  await migrate({ db, schema });
  return db;
}

export async function dropSchema(schema: string): Promise<void> {
  const db = createPgDatabase({ url: DATABASE_URL, schema: "public", poolSize: 1, logger: silent });
  try {
    await db.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  } finally {
    await db.close();
  }
}
