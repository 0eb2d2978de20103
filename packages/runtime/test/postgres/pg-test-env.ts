import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { DatabaseConfig } from "../../src/database/config.js";
import { createPostgresBackend, type PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { openDatabase } from "../../src/database/open-database.js";
import { createLogger } from "../../src/observability/logger.js";

/**
 * The real PostgreSQL of this machine (trust auth). Each test works in its own schema, dropped afterwards,
 * so test files run in parallel without seeing each other's jobs.
 */
export const PG_HOST = "127.0.0.1";
export const PG_PORT = 5432;
export const PG_URL = `postgres://postgres@${PG_HOST}:${PG_PORT}/test`;

export const silentLogger = createLogger({ service: "test", level: "silent" });

export function uniqueSchema(label = "t"): string {
  return `jfast_${label}_${randomBytes(5).toString("hex")}`;
}

/** One short-lived superuser connection for setup and assertions the app itself must not be able to do. */
export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await withAdmin((c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}

/**
 * A schema as a service left it before migration `name`: every earlier migration applied and recorded, then
 * `fill` run in it (search_path set), so a test can see what the upgrade does to rows of the older layout.
 */
export async function schemaBeforeMigration(schema: string, name: string, fill: (client: pg.Client) => Promise<void>): Promise<void> {
  const { loadMigrations } = await import("../../src/database/migrate.js");
  const migrations = await loadMigrations();
  const target = migrations.find((m) => m.name === name);
  if (!target) throw new Error(`no migration named ${name}`);
  await withAdmin(async (c) => {
    await c.query(`CREATE SCHEMA "${schema}"`);
    await c.query(`SET search_path TO "${schema}"`);
    await c.query(`CREATE TABLE jfast_migrations (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const m of migrations.filter((m) => m.version < target.version)) {
      await c.query(m.sql);
      await c.query("INSERT INTO jfast_migrations (version, name, checksum) VALUES ($1, $2, $3)", [m.version, m.name, m.checksum]);
    }
    await fill(c);
  });
}

export function databaseConfig(overrides: Partial<DatabaseConfig> & { schema: string }): DatabaseConfig {
  return { url: PG_URL, readUrl: null, rls: false, poolSize: 4, inboxRetentionDays: 7, ...overrides };
}

export async function openTestDatabase(overrides: Partial<DatabaseConfig> & { schema: string }): Promise<DatabaseProvider> {
  return openDatabase({ config: databaseConfig(overrides), root: tmpdir(), logger: silentLogger });
}

/** A migrated schema with a backend on it; `cleanup` closes both and drops the schema. */
export async function openTestBackend(options: { schema?: string; poolSize?: number; queue?: string; keepCompleted?: boolean; durableClaims?: boolean } = {}): Promise<{
  schema: string;
  database: DatabaseProvider;
  backend: PostgresBackend;
  cleanup(): Promise<void>;
}> {
  const schema = options.schema ?? uniqueSchema();
  const database = await openTestDatabase({ schema, poolSize: options.poolSize ?? 4 });
  const backend = createPostgresBackend({
    db: database.sql,
    schema,
    queue: options.queue ?? "jfast.jobs",
    ...(options.keepCompleted !== undefined ? { keepCompleted: options.keepCompleted } : {}),
    ...(options.durableClaims !== undefined ? { durableClaims: options.durableClaims } : {}),
    connectionUrl: PG_URL,
    logger: silentLogger,
  });
  await backend.setup();
  return {
    schema,
    database,
    backend,
    async cleanup() {
      await backend.close();
      await database.close();
      await dropSchema(schema);
    },
  };
}

const RUNTIME_ENTRY = fileURLToPath(new URL("../../src/index.ts", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

/**
 * Copies test/fixtures/<name> (a service root: jfast.toml + modules/<m>/tasks.ts) into a temp directory.
 * Fixture files import "@jfast/runtime" as a service does; the copy points that import at this checkout's
 * source so the app under test and the test share one runtime.
 */
export async function copyFixture(name: string): Promise<{ root: string; remove(): Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), `jfast-${name}-`));
  await cp(path.join(FIXTURES, name), root, { recursive: true });
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replaceAll('"@jfast/runtime"', JSON.stringify(RUNTIME_ENTRY)));
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

// One polling helper for every service-backed suite.
export { eventually, sleep } from "../conformance/harness.js";
