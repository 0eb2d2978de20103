import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { createJfast } from "../../src/create-jfast.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { createBillingTables, seen, startBillingApp, type BillingApp } from "./billing-app.js";
import { copyFixture, eventually, silentLogger, uniqueSchema, withAdmin } from "./pg-test-env.js";

/** TaskSession and idempotentOn, through a real app built from a service root, on the real server. */
describe("postgres: TaskSession", () => {
  let app: BillingApp | null = null;
  afterEach(async () => {
    await app?.stop();
    app = null;
  });

  async function start(): Promise<BillingApp> {
    const schema = uniqueSchema("session");
    await createBillingTables(schema);
    app = await startBillingApp({ schema });
    return app;
  }

  const rows = (schema: string, table: string, invoice: number) =>
    withAdmin(async (c) => (await c.query(`SELECT attempt FROM "${schema}".${table} WHERE invoice_id = $1 ORDER BY attempt`, [invoice])).rows.map((r) => r.attempt as number));

  it("commits the handler's writes when it returns", async () => {
    const { jfast, schema, worker } = await start();
    const queue = jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "billing.record_charge", payload: { invoice_id: 1 } });
    await queue.enqueue(job);
    worker();
    await eventually("the job completed", async () => (await queue.backend.getJob({ id: job.id }))?.state === "completed");
    expect(await rows(schema, "charges", 1)).toEqual([1]);
  });

  it("rolls the handler's writes back when it throws, then retries", async () => {
    const { jfast, schema, worker } = await start();
    const queue = jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "billing.flaky_charge", payload: { invoice_id: 2 } });
    await queue.enqueue(job);
    worker();
    const info = await eventually("the job completed on its retry", async () => {
      const found = await queue.backend.getJob({ id: job.id });
      return found?.state === "completed" ? found : null;
    });
    expect(info.job.attempts).toBe(2);
    expect(info.job.errors.map((e) => e.message)).toEqual(["card processor timed out"]);
    // Attempt 1 wrote a row, then threw: the row went with the rollback. Only attempt 2's write exists.
    expect(await rows(schema, "charges", 2)).toEqual([2]);
  });

  it("idempotentOn: a redelivered duplicate is skipped once the work committed", async () => {
    const { jfast, schema, worker } = await start();
    const queue = jfast.require<QueueProvider>("queue");
    const calls = () => seen().receiptCalls.filter((c) => c.invoice_id === 3);
    const job = new Job({ task: "billing.send_receipt", payload: { invoice_id: 3 } });
    await queue.enqueue(job);
    worker();
    await eventually("the first delivery completed", async () => (await queue.backend.getJob({ id: job.id }))?.state === "completed");
    expect(calls()).toHaveLength(1);

    // Redeliver: as if the completion had been lost after the handler's transaction committed.
    await withAdmin((c) => c.query(`UPDATE "${schema}".jfast_jobs SET state = 'ready', available_at = now() WHERE id = $1`, [job.id]));
    await eventually("the redelivery completed", async () => {
      const found = await queue.backend.getJob({ id: job.id });
      return found?.state === "completed" && found.job.attempts === 2;
    });
    // And a second job carrying the same key (a duplicate enqueue) is skipped the same way.
    const duplicate = new Job({ task: "billing.send_receipt", payload: { invoice_id: 3 } });
    await queue.enqueue(duplicate);
    await eventually("the duplicate completed", async () => (await queue.backend.getJob({ id: duplicate.id }))?.state === "completed");

    expect(calls()).toHaveLength(1);
    expect(await rows(schema, "receipts", 3)).toEqual([1]);
    const inbox = await withAdmin(async (c) => (await c.query(`SELECT consumer, key FROM "${schema}".jfast_inbox`)).rows);
    expect(inbox).toEqual([{ consumer: "billing.send_receipt", key: "3" }]);
  });

  it("idempotentOn: a rolled-back claim lets the retry run", async () => {
    const { jfast, schema, worker } = await start();
    const queue = jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "billing.send_receipt", payload: { invoice_id: 4, fail_first: true } });
    await queue.enqueue(job);
    worker();
    await eventually("the job completed on its retry", async () => (await queue.backend.getJob({ id: job.id }))?.state === "completed");
    // Attempt 1 claimed the key, wrote, threw: claim and write rolled back together, so attempt 2 ran.
    expect(seen().receiptCalls.filter((c) => c.invoice_id === 4).map((c) => c.attempt)).toEqual([1, 2]);
    expect(await rows(schema, "receipts", 4)).toEqual([2]);
  });
});

describe("postgres: TaskSession without the database plugin", () => {
  it("stops start-up with the fix in the message", async () => {
    const fixture = await copyFixture("pg-no-database");
    try {
      const error = await createJfast({ root: fixture.root, env: {}, logger: silentLogger }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "CONFIG_PLUGIN_MISSING" });
      expect((error as Error).message).toContain('task "billing.record_charge" asks for a session');
      expect((error as Error).message).toContain('add "database" to [plugins] enabled');
    } finally {
      await fixture.remove();
    }
  });
});
