import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { SqlDatabase } from "../core/sql-port.js";
import { JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/** The numbered, append-only migrations shipped with the runtime, in order. */
export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => FILE.test(f)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const [, version, name] = FILE.exec(file)!;
    const sql = await readFile(new URL(file, MIGRATIONS_DIR), "utf8");
    migrations.push({ version: Number(version), name: name!, sql, checksum: createHash("sha256").update(sql).digest("hex") });
  }
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 0001, 0002, … without gaps; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

/**
 * Brings `schema` up to date. Several processes may start at once (an API and its workers on deploy):
 * each takes the same transaction-scoped advisory lock, keyed by the schema name, before looking at what
 * is applied, so exactly one applies each migration and the others find it done. The schema itself is
 * created under the lock too: two concurrent `CREATE SCHEMA IF NOT EXISTS` can fail on a unique violation.
 * All pending migrations apply in one transaction: a failure leaves the schema as it was.
 */
export async function migrate(params: { db: SqlDatabase; schema: string; logger?: Logger }): Promise<{ applied: number[] }> {
  const { db, schema, logger } = params;
  const migrations = await loadMigrations();
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`jfast.migrate:${schema}`]);
    // Look before creating: CREATE SCHEMA IF NOT EXISTS demands CREATE on the database even when the
    // schema exists, which an application role given a ready-made schema does not have.
    const existing = await tx.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (existing.length === 0) {
      try {
        await tx.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
      } catch (cause) {
        if (cause instanceof JfastError) throw cause;
        throw new JfastError(`cannot create schema "${schema}": ${(cause as Error).message}`, {
          code: "MIGRATION_FAILED",
          hint: `create the schema beforehand (CREATE SCHEMA ${quoteIdent(schema)} AUTHORIZATION <app role>) or grant the role CREATE on the database`,
          docs: "jfast docs postgres#migrations",
          cause,
        });
      }
    }
    // The connection's search_path may have been resolved before the schema existed; say it again.
    await tx.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS jfast_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         checksum text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const rows = await tx.query<{ version: number; checksum: string }>("SELECT version, checksum FROM jfast_migrations ORDER BY version");
    const done = new Map(rows.map((r) => [Number(r.version), r.checksum]));
    const known = new Map(migrations.map((m) => [m.version, m]));
    for (const [version, checksum] of done) {
      const migration = known.get(version);
      if (!migration) {
        logger?.warn("the database has a migration this runtime does not know; a newer version ran here", { schema, version });
      } else if (migration.checksum !== checksum) {
        // Applied migrations are never edited: a change goes in a new numbered file.
        logger?.warn("an applied migration's file has changed since it ran; add a new migration instead of editing one", {
          schema,
          version,
          name: migration.name,
        });
      }
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      try {
        await tx.query(migration.sql);
      } catch (cause) {
        if (cause instanceof JfastError) throw cause;
        throw new JfastError(`migration ${migration.version} (${migration.name}) failed in schema "${schema}": ${(cause as Error).message}`, {
          code: "MIGRATION_FAILED",
          hint: "nothing was applied; fix the cause (often: the database user lacks CREATE on the schema) and start again",
          docs: "jfast docs postgres#migrations",
          cause,
        });
      }
      await tx.query("INSERT INTO jfast_migrations (version, name, checksum) VALUES ($1, $2, $3)", [
        migration.version,
        migration.name,
        migration.checksum,
      ]);
      applied.push(migration.version);
    }
    if (applied.length > 0) logger?.info("applied database migrations", { schema, versions: applied });
    return { applied };
  });
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
