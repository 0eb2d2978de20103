import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { withRequest } from "../../src/context/context.js";
import { Event } from "../../src/core/event.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { subscriberJobId } from "../../src/local-events/subscriber-jobs.js";
import { jfastErrorResponse } from "../../src/http/error-response.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { copyFixture, dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";

const ALERT = "receipt.registered->alert.checkBudget";
const LEDGER = "receipt.registered->ledger.bookEntry";

interface Seen {
  alerts: Array<{ event: Event; isEvent: boolean; tenant: string | null; requestId: string | null; trace: unknown; jobId: string | null }>;
  ledger: Array<{ eventId: string; attempt: number }>;
}
const seen = () => ((globalThis as Record<string, unknown>).__jfastEventsSeen ??= { alerts: [], ledger: [] }) as Seen;

/** Local domain events on the real PostgreSQL server, through an app built from the pg-events service root. */
describe("local events on PostgreSQL", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  async function start() {
    const schema = uniqueSchema("events");
    stops.push(() => dropSchema(schema));
    await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".ledger (event_id text NOT NULL, attempt integer NOT NULL)`));
    const fixture = await copyFixture("pg-events");
    stops.push(fixture.remove);
    const jfast: Jfast = await createJfast({
      root: fixture.root,
      env: {},
      logger: silentLogger,
      config: { plugin: { database: { url: PG_URL, schema, pool_size: 4 } } },
    });
    stops.push(() => jfast.stop());
    await jfast.start();
    const { registerReceipt } = (await import(`${fixture.root}/modules/receipt/tasks.ts`)) as {
      registerReceipt(outbox: Outbox, session: unknown, data: Record<string, unknown>): Promise<{ event: Event; result: { inserted: string[]; subscribers: string[] } }>;
    };
    return {
      jfast,
      schema,
      registerReceipt,
      database: jfast.require<DatabaseProvider>("database"),
      outbox: jfast.require<Outbox>("outbox"),
      queue: jfast.require<QueueProvider>("queue"),
      jobs: (where = "true", params: unknown[] = []) =>
        withAdmin(async (c) => (await c.query(`SELECT id, task, state FROM "${schema}".jfast_jobs WHERE ${where} ORDER BY task`, params)).rows),
      worker() {
        const worker = jfast.createWorker({ concurrency: 2 });
        worker.start();
      },
    };
  }

  it("subscribers are named <type>-><module>.<export or name> and registered as tasks", async () => {
    const { jfast } = await start();
    expect(jfast.tasks.names()).toEqual([ALERT, LEDGER]);
  });

  it("writes one job per subscriber in the publishing transaction, and none after a rollback", async () => {
    const { database, outbox, registerReceipt, jobs } = await start();
    const { event, result } = await database.transaction(async (tx) => {
      const published = await registerReceipt(outbox, tx, { receipt_id: "r1", total_cents: 500 });
      // Written in this transaction: invisible to everyone else until it commits.
      expect(await jobs()).toEqual([]);
      return published;
    });
    expect(result.subscribers).toEqual([ALERT, LEDGER]);
    expect(await jobs()).toEqual([
      { id: subscriberJobId(event.id, ALERT), task: ALERT, state: "ready" },
      { id: subscriberJobId(event.id, LEDGER), task: LEDGER, state: "ready" },
    ]);

    const failure = await database
      .transaction(async (tx) => {
        await registerReceipt(outbox, tx, { receipt_id: "r2", total_cents: 700 });
        throw new Error("the request failed after publishing");
      })
      .catch((e: Error) => e);
    expect(failure).toBeInstanceOf(Error);
    expect(await jobs()).toHaveLength(2);
  });

  it("publishing the same event twice enqueues each subscriber once", async () => {
    const { schema, database, outbox, jobs } = await start();
    const event = new Event({ type: "receipt.registered", data: { receipt_id: "r3" } });
    const first = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    const second = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    expect(first.inserted).toHaveLength(2);
    expect(second.inserted).toEqual([]);
    // A service without drizzle publishes through a pg client inside BEGIN: same ids, still nothing new.
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      await client.query("BEGIN");
      const third = await outbox.publish(client, "receipts", event);
      await client.query("COMMIT");
      expect(third.inserted).toEqual([]);
    } finally {
      await client.end();
    }
    expect((await jobs()).map((j) => j.task)).toEqual([ALERT, LEDGER]);
  });

  it("the worker runs the subscriber with the reconstructed event and the publisher's tenant, request id and trace", async () => {
    const { database, outbox, registerReceipt, queue, worker } = await start();
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const { event } = await withRequest({ tenantId: "acme", requestId: "req-42", traceparent, tracestate: "vendor=1" }, () =>
      database.transaction((tx) => registerReceipt(outbox, tx, { receipt_id: "r4", total_cents: 900 })),
    );
    worker();
    const alertJob = subscriberJobId(event.id, ALERT);
    await eventually("the alert subscriber ran", async () => (await queue.backend.getJob({ id: alertJob }))?.state === "completed");
    const received = seen().alerts.find((a) => a.event.id === event.id)!;
    expect(received).toMatchObject({
      isEvent: true,
      tenant: "acme",
      requestId: "req-42",
      trace: { traceparent, tracestate: "vendor=1" },
      jobId: alertJob,
    });
    expect(received.event.toJSON()).toEqual(event.toJSON());
    expect(received.event.occurredAt).toBeInstanceOf(Date);
  });

  it("a subscriber with a session has its effect once per event, despite a redelivery and a failed attempt", async () => {
    const { schema, database, outbox, registerReceipt, queue, worker } = await start();
    const { event } = await database.transaction((tx) => registerReceipt(outbox, tx, { receipt_id: "r5", total_cents: 100, fail_first: true }));
    const ledgerJob = subscriberJobId(event.id, LEDGER);
    worker();
    const done = await eventually("the ledger subscriber completed", async () => {
      const info = await queue.backend.getJob({ id: ledgerJob });
      return info?.state === "completed" ? info : null;
    });
    // Attempt 1 wrote, then threw: its write and its inbox claim rolled back together; attempt 2 ran.
    expect(done.job.attempts).toBe(2);
    const ledger = () =>
      withAdmin(async (c) => (await c.query(`SELECT attempt FROM "${schema}".ledger WHERE event_id = $1`, [event.id])).rows.map((r) => r.attempt));
    expect(await ledger()).toEqual([2]);

    // Redeliver, as if the completion had been lost after the handler's transaction committed.
    await withAdmin((c) => c.query(`UPDATE "${schema}".jfast_jobs SET state = 'ready', available_at = now() WHERE id = $1`, [ledgerJob]));
    await eventually("the redelivery completed", async () => {
      const info = await queue.backend.getJob({ id: ledgerJob });
      return info?.state === "completed" && info.job.attempts === 3;
    });
    expect(await ledger()).toEqual([2]);
    expect(seen().ledger.filter((l) => l.eventId === event.id).map((l) => l.attempt)).toEqual([1, 2]);
    const inbox = await withAdmin(async (c) => (await c.query(`SELECT consumer, key FROM "${schema}".jfast_inbox`)).rows);
    expect(inbox).toEqual([{ consumer: LEDGER, key: event.id }]);
  });

  it("an event nobody receives throws UndeliverableEvent inside the request and writes nothing", async () => {
    const { schema, outbox, jobs } = await start();
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      await client.query("BEGIN");
      const error = await outbox
        .publish(client, "receipts", new Event({ type: "receipt.cancelled", data: { receipt_id: "r6" } }))
        .catch((e: unknown) => e);
      // The transaction is still usable (nothing was attempted) and commits: still nothing was written.
      await client.query("COMMIT");
      expect(error).toMatchObject({ name: "UndeliverableEvent", code: "UNDELIVERABLE_EVENT", eventType: "receipt.cancelled", topic: "receipts" });
      expect((error as Error).message).toContain('fix: subscribe to it in a module');
      expect((error as Error).message).toContain('enable the "kafka" plugin');
    } finally {
      await client.end();
    }
    expect(await jobs()).toEqual([]);
    const outboxRows = await withAdmin(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${schema}".jfast_outbox`)).rows[0].n);
    expect(outboxRows).toBe(0);
  });
  it("an HTTP layer answers 500 with the fix, and the request's writes roll back", async () => {
    const { schema, jfast, database, outbox, jobs } = await start();
    // A route as a service writes it: its own row and the event in one transaction; errors through jfastErrorResponse.
    const route = (request: Request) =>
      jfast.withRequest({ tenantId: "acme", requestId: request.headers.get("x-request-id") }, async () => {
        try {
          await database.transaction(async (tx) => {
            await database.executorFor(tx).query("INSERT INTO ledger (event_id, attempt) VALUES ('route', 0)");
            await outbox.publish(tx, "receipts", new Event({ type: "receipt.cancelled", data: {} }));
          });
          return new Response(null, { status: 201 });
        } catch (error) {
          return jfastErrorResponse(error) ?? new Response("internal error", { status: 500 });
        }
      });
    const response = await route(new Request("http://shop.test/receipts/r7/cancel", { method: "POST", headers: { "x-request-id": "req-7" } }));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: 'nobody receives "receipt.cancelled" events published to "receipts": service "shop" has no subscriber of that type and no event bus',
      code: "UNDELIVERABLE_EVENT",
      fix: expect.stringContaining('subscribe("receipt.cancelled"'),
      docs: "jfast docs events#undeliverable-events",
    });
    expect(await jobs()).toEqual([]);
    const ledger = await withAdmin(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${schema}".ledger`)).rows[0].n);
    expect(ledger).toBe(0);
  });
});
