import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { getTableConfig } from "drizzle-orm/pg-core";
import { afterEach, describe, expect, it } from "vitest";
import { createPgDatabase } from "../../src/database/pg-database.js";
import { loadMigrations, migrate } from "../../src/database/migrate.js";
import { openDatabase } from "../../src/database/open-database.js";
import { jfastTables } from "../../src/database/schema.js";
import { databaseConfig, dropSchema, openTestDatabase, silentLogger, uniqueSchema, withAdmin } from "./pg-test-env.js";

describe("postgres: migrations", () => {
  const schemas: string[] = [];
  afterEach(async () => {
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });

  it("five processes opening a fresh schema at once apply each migration exactly once", async () => {
    const schema = uniqueSchema("migrate");
    schemas.push(schema);
    // Five providers with their own pools stand for five processes starting together.
    const opened = await Promise.all(Array.from({ length: 5 }, () => openTestDatabase({ schema, poolSize: 1 })));
    try {
      const versions = await withAdmin(async (c) => (await c.query(`SELECT version FROM "${schema}".jfast_migrations ORDER BY version`)).rows.map((r) => r.version));
      const expected = (await loadMigrations()).map((m) => m.version);
      expect(expected.length).toBeGreaterThanOrEqual(4);
      expect(versions).toEqual(expected);
      // Every one of them can use the tables.
      for (const database of opened) {
        expect(await database.sql.query("SELECT count(*)::int AS n FROM jfast_jobs")).toEqual([{ n: 0 }]);
      }
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  });

  it("is idempotent: a second run applies nothing", async () => {
    const schema = uniqueSchema("migrate");
    schemas.push(schema);
    const db = createPgDatabase({ ...databaseConfig({ schema }), url: databaseConfig({ schema }).url!, logger: silentLogger });
    try {
      const first = await migrate({ db, schema });
      expect(first.applied.length).toBeGreaterThanOrEqual(4);
      expect(await migrate({ db, schema })).toEqual({ applied: [] });
    } finally {
      await db.close();
    }
  });

  it("creates exactly the tables, columns and indexes the drizzle schema declares", async () => {
    const schema = uniqueSchema("migrate");
    schemas.push(schema);
    const database = await openTestDatabase({ schema });
    try {
      for (const [name, table] of Object.entries(jfastTables)) {
        const config = getTableConfig(table);
        const declared = config.columns
          .map((c) => ({ name: c.name, type: c.getSQLType(), notNull: c.notNull }))
          .sort((a, b) => a.name.localeCompare(b.name));
        const actual = await withAdmin(async (c) =>
          (
            await c.query(
              `SELECT column_name AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull"
               FROM information_schema.columns ic
               JOIN pg_attribute a ON a.attrelid = format('%I.%I', ic.table_schema, ic.table_name)::regclass AND a.attname = ic.column_name
               WHERE ic.table_schema = $1 AND ic.table_name = $2
               ORDER BY column_name`,
              [schema, name],
            )
          ).rows,
        );
        expect(actual, name).toEqual(declared);
        const indexes = await withAdmin(async (c) =>
          (await c.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexname NOT LIKE '%_pkey'`, [schema, name])).rows
            .map((r) => r.indexname)
            .sort(),
        );
        expect(indexes, name).toEqual(config.indexes.map((i) => i.config.name).sort());
      }
    } finally {
      await database.close();
    }
  });

  it("fails start-up with BackendError and the fix when the server cannot be reached", async () => {
    const port = await closedPort();
    const error = await openDatabase({
      config: databaseConfig({ schema: "public", url: `postgres://postgres@127.0.0.1:${port}/test` }),
      root: tmpdir(),
      logger: silentLogger,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "BackendError", code: "DATABASE_UNAVAILABLE" });
    expect((error as { hint: string }).hint).toContain("DATABASE_URL");
    expect((error as Error).message).toContain(`127.0.0.1:${port}/test`);
  });
});

/** A port nothing listens on: bound by us a moment ago, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
