import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { AppWorker as Worker } from "../../src/worker/worker-group.js";
import { copyFixture, dropSchema, PG_URL, silentLogger, withAdmin } from "./pg-test-env.js";

/**
 * The pg-billing fixture (jfast.toml + modules/billing/tasks.ts) started as a real app on the real server,
 * in its own schema, with the tables its tasks write created by the test.
 */
export interface BillingApp {
  jfast: Jfast;
  schema: string;
  worker(concurrency?: number): Worker;
  stop(): Promise<void>;
}

export async function startBillingApp(options: {
  schema: string;
  url?: string;
  rls?: boolean;
  dropSchemaOnStop?: boolean;
  /** Sections laid over the fixture's jfast.toml besides the database's (`service`, `http`). */
  config?: Record<string, unknown>;
}): Promise<BillingApp> {
  const fixture = await copyFixture("pg-billing");
  let jfast: Jfast | null = null;
  try {
    jfast = await createJfast({
      root: fixture.root,
      env: {},
      logger: silentLogger,
      config: { ...options.config, plugin: { database: { url: options.url ?? PG_URL, schema: options.schema, rls: options.rls ?? false, pool_size: 4 } } },
    });
    await jfast.start();
  } catch (error) {
    await jfast?.stop().catch(() => undefined);
    await fixture.remove();
    if (options.dropSchemaOnStop !== false) await dropSchema(options.schema).catch(() => undefined);
    throw error;
  }
  const app = jfast;
  return {
    jfast: app,
    schema: options.schema,
    worker(concurrency = 2) {
      const worker = app.createWorker({ concurrency });
      worker.start();
      return worker;
    },
    async stop() {
      await app.stop();
      await fixture.remove();
      if (options.dropSchemaOnStop !== false) await dropSchema(options.schema);
    },
  };
}

/** The tables the billing tasks write, in the app's schema. */
export async function createBillingTables(schema: string): Promise<void> {
  await withAdmin((c) =>
    c.query(`
      CREATE SCHEMA IF NOT EXISTS "${schema}";
      CREATE TABLE "${schema}".charges (invoice_id integer NOT NULL, attempt integer NOT NULL);
      CREATE TABLE "${schema}".receipts (invoice_id integer NOT NULL, attempt integer NOT NULL);
    `),
  );
}

export interface Seen {
  receiptCalls: Array<{ invoice_id: number; attempt: number }>;
  notes: Array<{ tenant: string | null; rows: string[] }>;
}

/** What the fixture's handlers recorded (they run in this process). */
export function seen(): Seen {
  return ((globalThis as Record<string, unknown>).__jfastBillingSeen ??= { receiptCalls: [], notes: [] }) as Seen;
}
