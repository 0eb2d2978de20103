import { afterEach, describe, expect, it } from "vitest";
import { withRequest } from "../../src/context/context.js";
import { Event } from "../../src/core/event.js";
import { createJfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { subscriberJobId } from "../../src/local-events/subscriber-jobs.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { copyFixture, dropSchema, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";

const ALERT = "receipt.registered->alert.checkBudget";
const LEDGER = "receipt.registered->ledger.bookEntry";

/**
 * Local subscribers' jobs carry the event's tenant, not the publisher's context (docs/flow-control.md#outbox-and-events),
 * so they fall under the queue's fairness by tenant like any other job of that tenant.
 */
describe("local events: subscriber jobs carry the event's tenant", () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it("an event of tenant acme published inside another tenant's request makes jobs of acme", async () => {
    const schema = uniqueSchema("evtenant");
    stops.push(() => dropSchema(schema));
    await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".ledger (event_id text NOT NULL, attempt integer NOT NULL)`));
    const fixture = await copyFixture("pg-events");
    stops.push(fixture.remove);
    const jfast = await createJfast({ root: fixture.root, env: {}, logger: silentLogger, config: { plugin: { database: { url: PG_URL, schema, pool_size: 4 } } } });
    stops.push(() => jfast.stop());
    await jfast.start();
    const database = jfast.require<DatabaseProvider>("database");
    const outbox = jfast.require<Outbox>("outbox");
    const queue = jfast.require<QueueProvider>("queue");

    const ofAcme = new Event({ type: "receipt.registered", data: { receipt_id: "r1", total_cents: 100 }, tenantId: "acme" });
    const ofNone = new Event({ type: "receipt.registered", data: { receipt_id: "r2", total_cents: 100 }, tenantId: null });
    await withRequest({ tenantId: "other", requestId: "req-1" }, () =>
      database.transaction(async (tx) => {
        await outbox.publish(tx, "receipts", ofAcme);
        await outbox.publish(tx, "receipts", ofNone);
      }),
    );
    const tenants = async (event: Event) =>
      Promise.all([ALERT, LEDGER].map(async (subscriber) => (await queue.backend.getJob({ id: subscriberJobId(event.id, subscriber) }))?.job.tenantId));
    expect(await tenants(ofAcme)).toEqual(["acme", "acme"]);
    expect(await tenants(ofNone)).toEqual([null, null]);
  });
});
