import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { withRequest } from "../../src/context/context.js";
import { Job } from "../../src/core/job.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { createBillingTables, startBillingApp, type BillingApp } from "./billing-app.js";
import { eventually, PG_URL, uniqueSchema, withAdmin } from "./pg-test-env.js";

/** outbox.enqueue with the PostgreSQL queue in the same database: the job row is written in the caller's transaction. */
describe("postgres: outbox.enqueue in the request's transaction", () => {
  let app: BillingApp | null = null;
  const clients: pg.Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end();
    await app?.stop();
    app = null;
  });

  async function start() {
    const schema = uniqueSchema("outbox");
    await createBillingTables(schema);
    app = await startBillingApp({ schema });
    const { jfast } = app;
    return {
      schema,
      database: jfast.require<DatabaseProvider>("database"),
      outbox: jfast.require<Outbox>("outbox"),
      queue: jfast.require<QueueProvider>("queue"),
    };
  }

  const jobExists = (schema: string, id: string) =>
    withAdmin(async (c) => (await c.query(`SELECT 1 FROM "${schema}".jfast_jobs WHERE id = $1`, [id])).rowCount === 1);

  it("drizzle transaction: the job exists iff the transaction commits", async () => {
    const { schema, database, outbox } = await start();
    const committed = new Job({ task: "billing.record_charge", payload: { invoice_id: 10 } });
    const rolledBack = new Job({ task: "billing.record_charge", payload: { invoice_id: 11 } });

    await database.transaction(async (tx) => {
      expect(await outbox.enqueue(tx, committed)).toMatchObject({ inserted: [committed.id], jobs: [{ id: committed.id, duplicate: false }] });
      // Not visible outside the transaction before it commits.
      expect(await jobExists(schema, committed.id)).toBe(false);
    });
    expect(await jobExists(schema, committed.id)).toBe(true);

    const failure = await database
      .transaction(async (tx) => {
        await outbox.enqueue(tx, rolledBack);
        throw new Error("the request failed after enqueueing");
      })
      .catch((e: Error) => e);
    expect(failure).toBeInstanceOf(Error);
    expect(await jobExists(schema, rolledBack.id)).toBe(false);
  });

  it("raw pg client inside BEGIN: COMMIT keeps the job, ROLLBACK drops it", async () => {
    const { schema, outbox } = await start();
    // A service that does not use drizzle: its own client on the same database and schema.
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    clients.push(client);
    await client.connect();

    const kept = new Job({ task: "billing.record_charge", payload: { invoice_id: 12 } });
    await client.query("BEGIN");
    await outbox.enqueue(client, kept);
    await client.query("COMMIT");
    expect(await jobExists(schema, kept.id)).toBe(true);

    const dropped = new Job({ task: "billing.record_charge", payload: { invoice_id: 13 } });
    await client.query("BEGIN");
    await outbox.enqueue(client, dropped);
    await client.query("ROLLBACK");
    expect(await jobExists(schema, dropped.id)).toBe(false);
  });

  it("the committed job runs, with the request's tenant", async () => {
    const { schema, database, outbox, queue } = await start();
    const job = await withRequest({ tenantId: "acme", requestId: "req-42" }, () =>
      database.transaction(async (tx) => {
        const made = new Job({ task: "billing.record_charge", payload: { invoice_id: 14 } });
        await outbox.enqueue(tx, made);
        return made;
      }),
    );
    expect(job.tenantId).toBe("acme");
    app!.worker();
    const info = await eventually("the job completed", async () => {
      const found = await queue.backend.getJob({ id: job.id });
      return found?.state === "completed" ? found : null;
    });
    expect(info.job.tenantId).toBe("acme");
    expect(info.job.requestId).toBe("req-42");
    const charges = await withAdmin(async (c) => (await c.query(`SELECT invoice_id FROM "${schema}".charges`)).rows);
    expect(charges).toEqual([{ invoice_id: 14 }]);
  });

  it("refuses a pool, which is not a transaction", async () => {
    const { database, outbox } = await start();
    const pool = (database.sql as unknown as { pool: pg.Pool }).pool;
    const error = await outbox.enqueue(pool, new Job({ task: "billing.record_charge", payload: {} })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "SESSION_INVALID" });
  });
});
