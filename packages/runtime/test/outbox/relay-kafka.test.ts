import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { subscriberJobId } from "../../src/local-events/subscriber-jobs.js";
import { on } from "../../src/kafka/on.js";
import { dropSchema, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { BROKER, createCleanup, eventually, requireBroker, sleep, startService, uniqueName } from "../kafka/harness.js";
import { copyFixture, outboxRows, startShop } from "./outbox-env.js";

const ALERT = "receipt.registered->alert.checkBudget";
const AUDIT = "receipt.registered->audit.trail";

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

/** outbox.publish with the Kafka events plugin on, against the real broker (docker/kafka/start.sh) and PostgreSQL. */
describe("outbox relay to Kafka", () => {
  async function shop() {
    const schema = uniqueSchema("obkafka");
    cleanup.add(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanup.add(fixture.remove);
    const app = await startShop({
      root: fixture.root,
      schema,
      plugins: ["database", "queue", "outbox", "kafka"],
      queue: { backend: "postgres" },
      kafka: { bootstrap_servers: BROKER, consumer_group: uniqueName("shop") },
    });
    cleanup.add(() => app.jfast.stop());
    return { ...app, schema };
  }

  it("an event reaches another service's on() handler iff the transaction commits; local subscribers still get their jobs", async () => {
    const topic = uniqueName("receipts");
    const heard: Event[] = [];
    cleanup.service(await startService({ name: "warehouse", group: uniqueName("warehouse"), handlers: [on(topic, (event) => void heard.push(event))] }));
    const { database, outbox, schema } = await shop();

    // One key: one partition, so the handler sees the events in the order they were relayed.
    const committed = new Event({ type: "receipt.registered", data: { receipt_id: "k1" }, key: "k" });
    const rolledBack = new Event({ type: "receipt.registered", data: { receipt_id: "k2" }, key: "k" });
    const later = new Event({ type: "receipt.registered", data: { receipt_id: "k3" }, key: "k" });
    const first = await database.transaction((tx) => outbox.publish(tx, topic, committed));
    expect(first).toMatchObject({ bus: true, subscribers: [ALERT, AUDIT] });
    await database
      .transaction(async (tx) => {
        await outbox.publish(tx, topic, rolledBack);
        throw new Error("the request failed after publishing");
      })
      .catch(() => undefined);
    await database.transaction((tx) => outbox.publish(tx, topic, later));

    await eventually("the later event heard", () => heard.some((e) => e.id === later.id), 30_000);
    expect(heard.map((e) => e.id)).toEqual([committed.id, later.id]);
    expect(heard[0]!.toJSON()).toEqual(committed.toJSON());
    // Local subscribers are served by the queue (the PostgreSQL queue here: written in the same transaction).
    const jobs = await withAdmin(async (c) => (await c.query(`SELECT id FROM "${schema}".jfast_jobs ORDER BY id`)).rows.map((r) => r.id));
    expect(jobs).toEqual(
      [subscriberJobId(committed.id, ALERT), subscriberJobId(committed.id, AUDIT), subscriberJobId(later.id, ALERT), subscriberJobId(later.id, AUDIT)].sort(),
    );
    expect((await outboxRows(schema)).map((r) => [r.id, r.state])).toEqual([
      [`event:${topic}:${committed.id}`, "delivered"],
      [`event:${topic}:${later.id}`, "delivered"],
    ]);
  });

  it("publishing the same event twice sends it to Kafka once; an event nobody here subscribes to goes to Kafka alone", async () => {
    const topic = uniqueName("receipts");
    const heard: Event[] = [];
    cleanup.service(await startService({ name: "warehouse", group: uniqueName("warehouse"), handlers: [on(topic, (event) => void heard.push(event))] }));
    const { database, outbox, schema } = await shop();
    const voided = new Event({ type: "receipt.voided", data: { receipt_id: "k5" }, key: "k5" });
    const first = await database.transaction((tx) => outbox.publish(tx, topic, voided));
    expect(first).toEqual({ inserted: [], subscribers: [], bus: true });
    await eventually("the event heard", () => heard.length === 1, 30_000);
    await database.transaction((tx) => outbox.publish(tx, topic, voided));
    const marker = new Event({ type: "receipt.voided", data: { receipt_id: "k5" }, key: "k5" });
    await database.transaction((tx) => outbox.publish(tx, topic, marker));
    await eventually("the marker heard", () => heard.some((e) => e.id === marker.id), 30_000);
    await sleep(200);
    expect(heard.map((e) => e.id)).toEqual([voided.id, marker.id]);
    expect(await outboxRows(schema)).toHaveLength(2);
  });

  it("an event without a key is refused inside the request, before anything is written", async () => {
    const { database, outbox, schema } = await shop();
    const error = await database
      .transaction((tx) => outbox.publish(tx, uniqueName("receipts"), new Event({ type: "receipt.voided", data: {} })))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EVENT_KEY_MISSING", message: expect.stringContaining("has no key") });
    expect(await outboxRows(schema)).toEqual([]);
  });
});
