import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import { dropSchema, eventually, sleep, uniqueSchema } from "../postgres/pg-test-env.js";
import { startPrivateBroker, type PrivateBroker } from "../rabbitmq/private-broker.js";
import { AMQP_URL, dropQueue, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { copyFixture, outboxRows, runs, startShop, type ShopApp } from "./outbox-env.js";

/**
 * The outbox relay onto the RabbitMQ queue, on the real PostgreSQL server and broker. The broker cannot say
 * whether it holds a message with a given id, so these tests count messages in the work queue: a
 * duplicate would show up there.
 */
describe("outbox relay to the RabbitMQ queue", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  let broker: PrivateBroker | null = null;

  beforeAll(async () => {
    // A node of our own for the outage test: stopping the shared broker would break the suites beside.
    broker = await startPrivateBroker();
  }, 420_000);
  afterAll(async () => {
    await broker?.shutdown();
  }, 60_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function shop(url = AMQP_URL): Promise<ShopApp & { schema: string }> {
    const schema = uniqueSchema("obrabbit");
    const queueName = uniqueQueue("outbox");
    cleanups.push(() => dropSchema(schema));
    if (url === AMQP_URL) cleanups.push(() => dropQueue(queueName));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const app = await startShop({ root: fixture.root, schema, queue: { backend: "rabbitmq", url, name: queueName } });
    cleanups.push(() => app.jfast.stop());
    return { ...app, schema };
  }

  it("a job enqueued through the outbox is published iff the transaction commits", async () => {
    const { database, outbox, backend, schema } = await shop();
    const committed = new Job({ task: "mail.send_receipt", payload: { receipt_id: "q1" } });
    await database.transaction((tx) => outbox.enqueue(tx, committed));
    await eventually("one message in the work queue", async () => (await backend.depths()).ready === 1, 10_000);

    const rolledBack = new Job({ task: "mail.send_receipt", payload: { receipt_id: "q2" } });
    await database
      .transaction(async (tx) => {
        await outbox.enqueue(tx, rolledBack);
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    const later = new Job({ task: "mail.send_receipt", payload: { receipt_id: "q3" } });
    await database.transaction((tx) => outbox.enqueue(tx, later));
    await eventually("the later row delivered", async () => (await outboxRows(schema)).every((r) => r.state === "delivered"), 10_000);
    expect((await backend.depths()).ready).toBe(2);
    expect((await outboxRows(schema)).map((r) => r.id.split(":")[2])).toEqual([committed.id, later.id]);
  });

  it("local events end to end: publishing the same event twice runs each subscriber once", async () => {
    const app = await shop();
    const { database, outbox, backend, schema } = app;
    const event = new Event({ type: "receipt.registered", data: { receipt_id: "q10" }, key: "q10" });
    const first = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    expect(first.inserted).toHaveLength(2);
    await eventually("both rows delivered", async () => (await outboxRows(schema)).every((r) => r.state === "delivered"), 10_000);
    // Published again after delivery: the outbox remembers the rows for [plugin.outbox] retention.
    const second = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    expect(second.inserted).toEqual([]);
    expect((await backend.depths()).ready).toBe(2);
    app.worker();
    await eventually("both subscribers ran", async () => runs().filter((r) => r.subject === event.id).length === 2);
    await sleep(500);
    expect(runs().filter((r) => r.subject === event.id).map((r) => r.handler).sort()).toEqual(["alert", "audit"]);
    expect(await backend.depths()).toMatchObject({ ready: 0, running: 0, dead: 0 });
  });

  it("while the broker is down: the row is retried, the outbox check degraded, and it is published once when the broker is back", { timeout: 120_000 }, async () => {
    const app = await shop(broker!.url);
    const { database, outbox, backend, schema } = app;
    const job = new Job({ task: "mail.send_receipt", payload: { receipt_id: "q20" } });
    await broker!.stopApp();
    try {
      await database.transaction((tx) => outbox.enqueue(tx, job));
      const degraded = await eventually("the outbox check degraded", async () => {
        const health = await outbox.health();
        return health.status === "degraded" ? health : null;
      });
      expect(degraded).toMatchObject({ pending: 1, failing: 1 });
      // Long enough for the backend to give up its own wait (10 s) at least once: a failed send, then a retry.
      await eventually("a failed send logged with its cause", async () => app.logs.some((l) => String(l.msg).includes("failed; its rows are retried")), 30_000);
    } finally {
      await broker!.startApp();
    }
    await eventually("the row delivered", async () => (await outboxRows(schema))[0]?.state === "delivered", 60_000);
    const [row] = await outboxRows(schema);
    expect(row!.attempts).toBeGreaterThanOrEqual(2);
    const failed = app.logs.find((l) => String(l.msg).includes("failed; its rows are retried"));
    expect(failed).toMatchObject({ level: "warn", rows: [row!.id], error: { class: "BackendError", message: expect.stringContaining("unreachable") } });
    expect(await eventually("one message", async () => ((await backend.depths()).ready === 1 ? true : null), 20_000)).toBe(true);
    app.worker();
    await eventually("the job ran", async () => runs().some((r) => r.subject === "q20"));
    await sleep(1000);
    expect(runs().filter((r) => r.subject === "q20")).toHaveLength(1);
    expect((await outbox.health()).status).toBe("ok");
  });
});
