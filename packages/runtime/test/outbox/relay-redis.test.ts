import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import { subscriberJobId } from "../../src/local-events/subscriber-jobs.js";
import { dropSchema, eventually, sleep, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { copyFixture, outboxRows, runs, startPrivateRedis, startShop, type ShopApp } from "./outbox-env.js";

const ALERT = "receipt.registered->alert.checkBudget";
const AUDIT = "receipt.registered->audit.trail";

/** The outbox relay onto the Redis queue, on the real PostgreSQL and Redis servers. */
describe("outbox relay to the Redis queue", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function shop(options: { url?: string; outbox?: Record<string, unknown> } = {}): Promise<ShopApp & { schema: string; queueName: string }> {
    const schema = uniqueSchema("obredis");
    const queueName = uniqueQueue("outbox");
    cleanups.push(() => dropSchema(schema));
    if (!options.url) cleanups.push(() => dropQueue(queueName));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const app = await startShop({
      root: fixture.root,
      schema,
      queue: { backend: "redis", url: options.url ?? REDIS_URL, name: queueName },
      ...(options.outbox ? { outbox: options.outbox } : {}),
    });
    cleanups.push(() => app.jfast.stop());
    return { ...app, schema, queueName };
  }

  it("a job enqueued through the outbox exists on Redis iff the transaction commits; the commit wakes the relay", async () => {
    const { database, outbox, backend, schema, queueName } = await shop();
    const committed = new Job({ task: "mail.send_receipt", payload: { receipt_id: "r1" } });
    const result = await database.transaction(async (tx) => {
      const written = await outbox.enqueue(tx, committed);
      // Inside the transaction: nobody else sees the row yet, so no relay can send it.
      expect(await withAdmin(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${schema}".jfast_outbox`)).rows[0].n)).toBe(0);
      return written;
    });
    expect(result.inserted).toEqual([committed.id]);
    const committedAt = Date.now();
    // poll_interval is 30 s in the fixture: arriving well before that means the commit's NOTIFY woke the relay.
    const info = await eventually("the job on Redis", () => backend.getJob({ id: committed.id }), 10_000);
    expect(Date.now() - committedAt).toBeLessThan(5000);
    expect(info).toMatchObject({ state: "ready", job: { task: "mail.send_receipt", payload: { receipt_id: "r1" }, maxAttempts: 3 } });

    const rolledBack = new Job({ task: "mail.send_receipt", payload: { receipt_id: "r2" } });
    const failure = await database
      .transaction(async (tx) => {
        await outbox.enqueue(tx, rolledBack);
        throw new Error("the request failed after enqueueing");
      })
      .catch((e: Error) => e);
    expect(failure.message).toBe("the request failed after enqueueing");
    // A later commit is relayed: the relay has passed since the rollback, and found nothing of it.
    const later = new Job({ task: "mail.send_receipt", payload: { receipt_id: "r3" } });
    await database.transaction((tx) => outbox.enqueue(tx, later));
    await eventually("the later job on Redis", () => backend.getJob({ id: later.id }), 10_000);
    expect(await backend.getJob({ id: rolledBack.id })).toBeNull();
    const rows = await outboxRows(schema);
    expect(rows.map((r) => [r.id, r.state, r.attempts])).toEqual([
      [`job:${queueName}:${committed.id}`, "delivered", 1],
      [`job:${queueName}:${later.id}`, "delivered", 1],
    ]);
  });

  it("local events end to end: publishing the same event twice runs each subscriber once", async () => {
    const app = await shop();
    const { database, outbox, backend, schema } = app;
    const event = new Event({ type: "receipt.registered", data: { receipt_id: "r10" }, key: "r10" });
    const first = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    const second = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    expect(first.inserted.sort()).toEqual([subscriberJobId(event.id, ALERT), subscriberJobId(event.id, AUDIT)].sort());
    expect(second.inserted).toEqual([]);
    app.worker();
    await eventually("both subscribers ran", async () => {
      const done = await Promise.all(first.inserted.map((id) => backend.getJob({ id })));
      return done.every((info) => info?.state === "completed");
    });
    // Published again after delivery (a retried request): the delivered rows are still remembered.
    const third = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    expect(third.inserted).toEqual([]);
    await sleep(500);
    const mine = runs().filter((r) => r.subject === event.id);
    expect(mine.map((r) => r.handler).sort()).toEqual(["alert", "audit"]);
    expect((await outboxRows(schema)).map((r) => r.state)).toEqual(["delivered", "delivered"]);
  });

  it("with retention = 0 the outbox forgets delivered rows, and Redis still recognises the job ids", async () => {
    const app = await shop({ outbox: { retention: 0 } });
    const { database, outbox, backend, schema } = app;
    const event = new Event({ type: "receipt.registered", data: { receipt_id: "r11" }, key: "r11" });
    const first = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    await eventually("the jobs on Redis", async () => (await Promise.all(first.inserted.map((id) => backend.getJob({ id })))).every(Boolean));
    await eventually("the delivered rows pruned", async () => (await outboxRows(schema)).length === 0, 10_000);
    const again = await database.transaction((tx) => outbox.publish(tx, "receipts", event));
    // Written again (the outbox no longer knows them) and relayed: an enqueue of existing ids, a no-op on Redis.
    expect(again.inserted.sort()).toEqual([...first.inserted].sort());
    await eventually("the repeat relayed", async () => (await outboxRows(schema)).every((r) => r.state === "delivered"), 10_000);
    app.worker();
    await eventually("both subscribers ran", async () => (await Promise.all(first.inserted.map((id) => backend.getJob({ id })))).every((i) => i?.state === "completed"));
    await sleep(500);
    expect(runs().filter((r) => r.subject === event.id).map((r) => r.handler).sort()).toEqual(["alert", "audit"]);
  });

  it("while Redis is down: retried, /ready degraded from the first failure, delivered once Redis is back", async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const app = await shop({ url: redis.url });
    const { database, outbox, backend, schema } = app;
    expect((await app.ready()).checks.outbox).toMatchObject({ status: "ok", pending: 0, failing: 0, dead: 0 });

    await redis.stop();
    const job = new Job({ task: "mail.send_receipt", payload: { receipt_id: "r20" } });
    try {
      await database.transaction((tx) => outbox.enqueue(tx, job));
      // The outbox check as /ready runs it (/ready itself waits on the Redis queue check while Redis is down).
      const degraded = await eventually("the outbox check degraded by the failing delivery", async () => {
        const health = await outbox.health();
        return health.status === "degraded" ? health : null;
      });
      expect(degraded).toMatchObject({ pending: 1, failing: 1, dead: 0, lastError: { class: "OutboxSendTimeout" } });
      expect(degraded.lagSeconds).toBeGreaterThan(0);
      expect(String(degraded.reason)).toContain("failing delivery");
      const logged = app.logs.find((l) => l.level === "warn" && String(l.msg).startsWith("outbox delivery to queue"));
      expect(logged).toMatchObject({ rows: [expect.stringContaining(job.id)], error: { class: "OutboxSendTimeout" } });
    } finally {
      await redis.start();
    }
    const info = await eventually("the job on Redis once it is back", () => backend.getJob({ id: job.id }), 30_000);
    expect(info).toMatchObject({ state: "ready" });
    const [row] = await eventually("the row delivered", async () => {
      const rows = await outboxRows(schema);
      return rows[0]?.state === "delivered" ? rows : null;
    }, 30_000);
    expect(row!.errors.length).toBeGreaterThanOrEqual(1);
    expect((await app.ready()).checks.outbox).toMatchObject({ status: "ok", pending: 0, failing: 0, dead: 0 });
    app.worker();
    await eventually("the job ran", async () => (await backend.getJob({ id: job.id }))?.state === "completed");
    await sleep(300);
    expect(runs().filter((r) => r.subject === "r20")).toHaveLength(1);
  });

  it("a row Redis keeps refusing is dead after max_attempts with every error; retried, it is delivered", async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const app = await shop({ url: redis.url });
    const { database, outbox, backend, schema } = app;
    // A real refusal from the real server: writes need a replica this Redis does not have.
    await redis.command("CONFIG", "SET", "min-replicas-to-write", "1");
    const job = new Job({ task: "mail.send_receipt", payload: { receipt_id: "r30" } });
    await database.transaction((tx) => outbox.enqueue(tx, job));
    const [dead] = await eventually("the row dead", async () => {
      const rows = await outboxRows(schema);
      return rows[0]?.state === "dead" ? rows : null;
    });
    expect(dead!.attempts).toBe(3);
    expect(dead!.errors.map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(dead!.errors[2]!.message).toContain("NOREPLICAS");
    const failures = app.logs.filter((l) => l.level === "warn" && String(l.msg).startsWith("outbox delivery to queue"));
    expect(failures).toHaveLength(3);
    expect(failures[0]).toMatchObject({ error: { message: expect.stringContaining("NOREPLICAS") } });
    expect(app.logs.find((l) => l.level === "error")).toMatchObject({ msg: expect.stringContaining("is dead"), reason: "attempts spent" });
    const report = await app.ready();
    expect(report.status).toBe("degraded");
    expect(report.checks.outbox).toMatchObject({ status: "degraded", pending: 0, dead: 1 });
    const listed = await outbox.listDead({ limit: 10 });
    expect(listed).toMatchObject([{ id: dead!.id, kind: "job", attempts: 3, lastError: { message: expect.stringContaining("NOREPLICAS") }, body: { id: job.id } }]);
    expect(await backend.getJob({ id: job.id })).toBeNull();

    await redis.command("CONFIG", "SET", "min-replicas-to-write", "0");
    expect(await outbox.retryDead({ ids: [dead!.id, "job:nope:missing"] })).toEqual({ retried: [dead!.id], missing: ["job:nope:missing"] });
    await eventually("the job on Redis", () => backend.getJob({ id: job.id }));
    expect((await outboxRows(schema))[0]).toMatchObject({ state: "delivered", attempts: 1 });
    expect((await app.ready()).checks.outbox).toMatchObject({ status: "ok", dead: 0, failing: 0 });
  });
});
