import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRedisBackend } from "../../src/backends/redis/redis-backend.js";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { createJfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { outboxChannel } from "../../src/outbox/channel.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { OutboxKind, writeOutboxRows, type OutboxWrite } from "../../src/outbox/outbox-rows.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { createLogger } from "../../src/observability/logger.js";
import { dropSchema, eventually, PG_URL, sleep, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { withMethod } from "../conformance/harness.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { copyFixture, outboxRows, startPrivateRedis, startShop } from "./outbox-env.js";

/** Rows written as a process with another configuration would write them (another queue name, a bus). */
async function writeAsAnotherProcess(database: DatabaseProvider, rows: OutboxWrite[]): Promise<void> {
  await database.transaction((tx) =>
    writeOutboxRows({ executor: database.executorFor(tx), rows, maxAttempts: 10, channel: outboxChannel(database.schema) }),
  );
}

describe("outbox relay", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function bareRoot(toml: string): Promise<string> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-outbox-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), toml);
    return root;
  }

  it("a row no retry can deliver with this configuration dies on its first attempt, with the reason", async () => {
    const schema = uniqueSchema("obdead");
    cleanups.push(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    // max_attempts = 10: only "undeliverable" can kill these rows at their first attempt.
    const app = await startShop({ root: fixture.root, schema, queue: { backend: "memory" }, outbox: { max_attempts: 10 } });
    cleanups.push(() => app.jfast.stop());
    const event = new Event({ type: "receipt.voided", data: {}, key: "r1" });
    const job = new Job({ task: "mail.send_receipt", payload: { receipt_id: "r1" } });
    await writeAsAnotherProcess(app.database, [
      { kind: OutboxKind.event, destination: "receipts", id: event.id, body: event.toJSON() },
      { kind: OutboxKind.job, destination: "billing.jobs", id: job.id, body: job.toJSON() },
    ]);
    const rows = await eventually("both rows dead", async () => {
      const found = await outboxRows(schema);
      return found.length === 2 && found.every((r) => r.state === "dead") ? found : null;
    });
    for (const row of rows) {
      expect(row.attempts).toBe(1);
      expect(row.errors).toHaveLength(1);
      expect(row.errors[0]).toMatchObject({ attempt: 1, class: "OutboxUndeliverable", reason: "undeliverable" });
    }
    expect(rows[0]!.errors[0]!.message).toContain(`this service has no event bus (the "kafka" plugin is off in this process)`);
    expect(rows[1]!.errors[0]!.message).toContain(`is for queue "billing.jobs", but this service's queue is "jfast.jobs"`);
    const logged = app.logs.filter((l) => l.level === "error").map((l) => l.msg);
    expect(logged).toEqual([expect.stringContaining(`outbox row event:receipts:${event.id} is dead`), expect.stringContaining(`outbox row job:billing.jobs:${job.id} is dead`)]);

    const report = await app.ready();
    expect(report.status).toBe("degraded");
    expect(report.checks.outbox).toMatchObject({ status: "degraded", dead: 2, pending: 0, reason: expect.stringContaining("jfast outbox dead") });
    const dead = await app.outbox.listDead({ limit: 10 });
    expect(dead.map((d) => d.id).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(dead.every((d) => d.lastError?.reason === "undeliverable")).toBe(true);
    expect(await app.outbox.discardDead({ all: true })).toMatchObject({ missing: [] });
    expect((await app.ready()).checks.outbox).toMatchObject({ status: "ok", dead: 0 });
  });

  it("a job for a service without a queue dies at once; outbox.enqueue there refuses to write one", async () => {
    const schema = uniqueSchema("obnoq");
    cleanups.push(() => dropSchema(schema));
    const root = await bareRoot(
      `[service]\nname = "reports"\n[plugins]\nenabled = ["database", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.outbox]\npoll_interval = 30\n`,
    );
    const jfast = await createJfast({ root, env: {}, logger: createLogger({ service: "reports", level: "silent" }) });
    cleanups.push(() => jfast.stop());
    await jfast.start();
    const database = jfast.require<DatabaseProvider>("database");
    const job = new Job({ task: "mail.send_receipt", payload: {} });
    const refused = await database.transaction((tx) => jfast.require<Outbox>("outbox").enqueue(tx, job)).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "NOT_SUPPORTED", message: expect.stringContaining("needs the queue plugin") });
    await writeAsAnotherProcess(database, [{ kind: OutboxKind.job, destination: "jfast.jobs", id: job.id, body: job.toJSON() }]);
    const [row] = await eventually("the row dead", async () => ((await outboxRows(schema))[0]?.state === "dead" ? outboxRows(schema) : null));
    expect(row).toMatchObject({ attempts: 1, errors: [{ reason: "undeliverable", message: expect.stringContaining("this service has no queue") }] });
  });

  it("two relays on one schema never send the same row: each of 600 jobs is enqueued exactly once", { timeout: 60_000 }, async () => {
    const schema = uniqueSchema("obtwo");
    const queue = uniqueQueue("outbox-two");
    cleanups.push(() => dropSchema(schema));
    cleanups.push(() => dropQueue(queue));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const sent: Array<{ relay: "a" | "b"; id: string }> = [];
    /** The real Redis backend, recording what each app's relay enqueues (and a little slower, so the two interleave). */
    const recording = (relay: "a" | "b"): QueueBackend => {
      const backend = createRedisBackend({ url: REDIS_URL, queue });
      return withMethod(backend, "enqueue", async (params) => {
        for (const job of params.jobs) sent.push({ relay, id: job.id });
        await sleep(20);
        return backend.enqueue(params);
      });
    };
    const a = await startShop({ root: fixture.root, schema, queue: { backend: "redis", url: REDIS_URL, name: queue }, backend: recording("a") });
    cleanups.push(() => a.jfast.stop());
    const b = await startShop({ root: fixture.root, schema, queue: { backend: "redis", url: REDIS_URL, name: queue }, backend: recording("b") });
    cleanups.push(() => b.jfast.stop());

    const jobs = Array.from({ length: 600 }, (_, i) => new Job({ task: "mail.send_receipt", payload: { receipt_id: `t${i}` } }));
    // One commit wakes both relays at the same moment; they claim 50 rows at a time with SKIP LOCKED.
    await a.database.transaction((tx) => a.outbox.enqueue(tx, jobs));
    await eventually("every row delivered", async () => {
      const [row] = await withAdmin(async (c) => (await c.query(`SELECT count(*) FILTER (WHERE state = 'delivered')::int AS n FROM "${schema}".jfast_outbox`)).rows);
      return row.n === jobs.length;
    }, 45_000);
    const perId = new Map<string, number>();
    for (const { id } of sent) perId.set(id, (perId.get(id) ?? 0) + 1);
    expect(perId.size).toBe(jobs.length);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
    const byRelay = { a: sent.filter((s) => s.relay === "a").length, b: sent.filter((s) => s.relay === "b").length };
    expect(byRelay.a).toBeGreaterThan(0);
    expect(byRelay.b).toBeGreaterThan(0);
    expect((await outboxRows(schema)).every((r) => r.attempts === 1)).toBe(true);
    expect((await a.queue.depths()).ready).toBe(jobs.length);
  });

  it("jfast.stop() with a send in flight gives the row back promptly, for the next process to deliver", { timeout: 60_000 }, async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const schema = uniqueSchema("obstop");
    const queue = uniqueQueue("outbox-stop");
    cleanups.push(() => dropSchema(schema));
    const fixture = await copyFixture("outbox-relay");
    cleanups.push(fixture.remove);
    const first = await startShop({ root: fixture.root, schema, queue: { backend: "redis", url: redis.url, name: queue } });
    let stopped = false;
    cleanups.push(async () => stopped || first.jfast.stop());
    // A frozen Redis keeps the connection open and never answers: the send stays in flight for as long as the
    // test needs, whatever the client's reconnect and retry timers would do with a dead one.
    redis.freeze();
    cleanups.push(async () => redis.thaw());
    const job = new Job({ task: "mail.send_receipt", payload: { receipt_id: "s1" } });
    await first.database.transaction((tx) => first.outbox.enqueue(tx, job));
    await eventually("a send in flight past send_timeout", async () => (await first.outbox.health()).failing === 1);
    const before = (await outboxRows(schema))[0];
    expect(before, "claimed once, its send unsettled").toMatchObject({ state: "pending", attempts: 1 });
    const stopping = first.jfast.stop();
    const released = Date.now();
    const [row] = await eventually("the row given back", async () => {
      // clock_timestamp(), not now(): now() is stamped when this statement's transaction starts, which can be a
      // moment before the release (available_at = its own now()) commits and becomes visible to this snapshot.
      const rows = await withAdmin(async (c) => (await c.query(`SELECT state, attempts, claimed_by, available_at <= clock_timestamp() AS due FROM "${schema}".jfast_outbox`)).rows);
      return rows[0]?.claimed_by === null ? rows : null;
    }, 10_000);
    // The relay waits at most min(5 s, send_timeout = 1 s) for a send in flight before giving its rows back.
    expect(Date.now() - released).toBeLessThan(5000);
    expect(row, "given back with its attempt returned, due at once").toEqual({ state: "pending", attempts: 0, claimed_by: null, due: true });
    // The abandoned send lands once Redis answers again; the relay has let go of it and records nothing.
    redis.thaw();
    await stopping;
    stopped = true;
    expect((await outboxRows(schema))[0]).toMatchObject({ state: "pending", attempts: 0 });

    const second = await startShop({ root: fixture.root, schema, queue: { backend: "redis", url: redis.url, name: queue } });
    cleanups.push(() => second.jfast.stop());
    // Its send of the same id is a no-op in Redis (the abandoned one landed) and settles the row.
    await eventually("the next process delivers it", async () => (await outboxRows(schema))[0]?.state === "delivered", 15_000);
    expect(await second.backend.getJob({ id: job.id })).toMatchObject({ state: "ready", job: { id: job.id, task: "mail.send_receipt" } });
    expect((await second.queue.depths()).ready).toBe(1);
  });

  // Creating a PGlite database costs tens of seconds on a busy machine.
  it("runs on the embedded database (PGlite) too, woken by its NOTIFY", { timeout: 240_000 }, async () => {
    const root = await bareRoot(
      `[service]\nname = "kiosk"\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.queue]\nbackend = "memory"\n[plugin.outbox]\npoll_interval = 30\n`,
    );
    const jfast = await createJfast({ root, env: {}, logger: createLogger({ service: "kiosk", level: "silent" }) });
    cleanups.push(() => jfast.stop());
    await jfast.start();
    const database = jfast.require<DatabaseProvider>("database");
    expect(database.driver).toBe("pglite");
    jfast.tasks.task("kiosk.print", () => {});
    const job = new Job({ task: "kiosk.print", payload: {} });
    await database.transaction((tx) => jfast.require<Outbox>("outbox").enqueue(tx, job));
    const committedAt = Date.now();
    await eventually("the job in the memory queue", () => jfast.require<QueueProvider>("queue").backend.getJob({ id: job.id }), 10_000);
    expect(Date.now() - committedAt).toBeLessThan(5000);
    expect((await jfast.require<Outbox>("outbox").health()).status).toBe("ok");
  });
});
