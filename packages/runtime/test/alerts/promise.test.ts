import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { Event } from "../../src/core/event.js";
import { Job } from "../../src/core/job.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { on } from "../../src/kafka/on.js";
import { createLogger } from "../../src/observability/logger.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { createPromiseChecker, lateHop } from "../../src/alerts/promise.js";
import { createMemoryAlertStore } from "../../src/alerts/alert-store.js";
import { createAlerter } from "../../src/alerts/alerter.js";
import { alertRuleSchema, resolveAlerting } from "../../src/alerts/config.js";
import { gatherTrace, type TraceView } from "../../src/admin/trace.js";
import { createRedaction } from "../../src/admin/redact.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { BROKER, connectAdmin, createCleanup, eventually, requireBroker, uniqueName } from "../kafka/harness.js";
import { loadBillingToml, receiver } from "./receiver.js";
import { DASHBOARD, QUEUE_TUNING, call, startAdminApp } from "../admin/admin-harness.js";

const RUNTIME_ENTRY = fileURLToPath(new URL("../../src/index.ts", import.meta.url));
const TOKEN = "viewer-token-promise-0123456789abcdef";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the shipping service's job does, set by the test: fail (it is retried) or publish shipment.created. */
interface ShippingSwitch {
  fail: boolean;
}
const SWITCH = "__jfastPromiseShipping";

/** A service root: jfast.toml and one module whose tasks.ts is `source`. */
async function serviceRoot(cleanup: ReturnType<typeof createCleanup>, name: string, toml: string, source: string): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), `jfast-promise-${name}-`));
  cleanup.add(() => rm(root, { recursive: true, force: true }));
  await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "${name}"\n\n${toml}`);
  await mkdir(path.join(root, "modules", name), { recursive: true });
  await writeFile(path.join(root, "modules", name, "tasks.ts"), source);
  return root;
}

/** Serves a service's /jfast/admin on loopback, as it is served in production; `port` 0 picks one. */
async function serveAdmin(jfast: Jfast, port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(jfast.routes());
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("promise alerts: invoice.paid → shipment.created across two services", () => {
  const cleanup = createCleanup();
  beforeAll(requireBroker);
  afterEach(() => cleanup.run());

  it("a kept promise stays quiet; a retrying subscriber job, then a stopped service, fire naming the late hop, and each recovers", { timeout: 180_000 }, async () => {
    const invoices = uniqueName("invoices");
    const shipments = uniqueName("shipments");
    // The topics exist before the consumer subscribes: the kept promise does not wait on a topic being created.
    const kafka = await connectAdmin();
    try {
      await kafka.createTopics({ topics: [{ topic: invoices }, { topic: shipments }], waitForLeaders: true });
    } finally {
      await kafka.disconnect();
    }
    const billingSchema = uniqueSchema("promise_b");
    const shippingSchema = uniqueSchema("promise_s");
    cleanup.add(() => dropSchema(billingSchema));
    cleanup.add(() => dropSchema(shippingSchema));
    const hooks = await receiver();
    cleanup.add(() => hooks.close());
    const control: ShippingSwitch = { fail: false };
    (globalThis as Record<string, unknown>)[SWITCH] = control;
    cleanup.add(async () => void delete (globalThis as Record<string, unknown>)[SWITCH]);

    // shipping: hears invoice.paid on Kafka, enqueues shipping.ship (which carries the request id); the job publishes
    // shipment.created through its outbox, or fails while the switch says so (retried every few hundred ms).
    const shippingGroup = uniqueName("shipping");
    const shippingRoot = await serviceRoot(
      cleanup,
      "shipping",
      [
        `[plugins]\nenabled = ["database", "queue", "outbox", "kafka"]`,
        `[plugin.database]\nurl = "${PG_URL}"\nschema = "${shippingSchema}"\npool_size = 4`,
        `[plugin.queue]\nbackend = "postgres"\npoll_interval = 0.05`,
        `[plugin.outbox]\npoll_interval = 0.1`,
        `[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${shippingGroup}"\n`,
      ].join("\n\n"),
      [
        `import { task, Event } from ${JSON.stringify(RUNTIME_ENTRY)};`,
        `export const ship = task("shipping.ship", { session: true, maxAttempts: 200, backoffBaseMs: 100 }, async (payload, { ctx, session }) => {`,
        `  if (globalThis[${JSON.stringify(SWITCH)}]?.fail) throw new Error("the carrier API is down");`,
        `  await ctx.require("outbox").publish(session, ${JSON.stringify(shipments)}, new Event({ type: "shipment.created", data: { invoice: payload.invoice }, key: payload.invoice }));`,
        `});`,
        ``,
      ].join("\n"),
    );
    const startShipping = async (port = 0) => {
      const jfast = await createJfast({
        root: shippingRoot,
        env: { JFAST_ADMIN_TOKENS: `viewer:${TOKEN}` },
        logger: createLogger({ service: "shipping", level: "silent" }),
        handlers: [
          on(invoices, async (event, { ctx }) => {
            await ctx.require<QueueProvider>("queue").enqueue(new Job({ task: "shipping.ship", payload: { invoice: (event.data as { invoice: string }).invoice } }));
          }),
        ],
      });
      await jfast.start();
      const worker = jfast.createWorker({ concurrency: 2 });
      worker.start();
      const admin = await serveAdmin(jfast, port);
      return {
        jfast,
        port: admin.port,
        async stop() {
          await admin.close();
          await worker.stop({ graceMs: 0 });
          await jfast.stop();
        },
      };
    };
    let shipping = await startShipping();
    cleanup.add(() => shipping.stop());

    // billing: publishes invoice.paid through its outbox to Kafka, in a request; its promise follows the request
    // into shipping through shipping's admin API.
    const billingRoot = await serviceRoot(
      cleanup,
      "billing",
      [
        `[plugins]\nenabled = ["database", "queue", "outbox", "kafka"]`,
        `[plugin.database]\nurl = "${PG_URL}"\nschema = "${billingSchema}"\npool_size = 4`,
        `[plugin.queue]\nbackend = "postgres"\npoll_interval = 0.05`,
        `[plugin.outbox]\npoll_interval = 0.1`,
        `[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("billing")}"`,
        `[[alerts]]\nname = "invoices ship"\nrule = "promise"\nwhen = "invoice.paid"\nthen = "shipment.created"\nwithin = "3s"\nwindow = "1m"\nthreshold = 1\ncooldown = "0s"\nwebhook = "${hooks.url}"`,
        `[alerting]\ninterval = "250ms"\nretries = 2\nretry_backoff = "50ms"`,
        `[[alerting.services]]\nname = "shipping"\nurl = "http://127.0.0.1:${shipping.port}"\ntoken_env = "SHIPPING_ADMIN_TOKEN"\n`,
      ].join("\n\n"),
      [
        `import { task, Event } from ${JSON.stringify(RUNTIME_ENTRY)};`,
        `export const pay = task("billing.pay", { session: true }, async (payload, { ctx, session }) => {`,
        `  await ctx.require("outbox").publish(session, ${JSON.stringify(invoices)}, new Event({ type: "invoice.paid", data: { invoice: payload.invoice }, key: payload.invoice }));`,
        `});`,
        ``,
      ].join("\n"),
    );
    const billing = await createJfast({ root: billingRoot, env: { SHIPPING_ADMIN_TOKEN: TOKEN }, logger: createLogger({ service: "billing", level: "silent" }) });
    await billing.start();
    cleanup.add(() => billing.stop());
    const billingWorker = billing.createWorker({ concurrency: 2 });
    billingWorker.start();
    cleanup.add(() => billingWorker.stop({ graceMs: 0 }));

    /** An invoice paid in its own request: billing.pay's transaction writes invoice.paid to the outbox. */
    const pay = (invoice: string) =>
      billing.withRequest({ requestId: uniqueName(`req-${invoice}`) }, async () => {
        await billing.require<DatabaseProvider>("database").transaction(async (tx) => {
          await billing.require<Outbox>("outbox").publish(tx, invoices, new Event({ type: "invoice.paid", data: { invoice }, key: invoice }));
        });
      });
    const requestOf = async (invoice: string): Promise<string> => {
      const rows = await billing.require<DatabaseProvider>("database").sql.query<{ request_id: string }>(
        `SELECT body ->> 'requestId' AS request_id FROM jfast_outbox WHERE kind = 'event' AND (body -> 'data' ->> 'invoice') = $1`,
        [invoice],
      );
      return rows[0]!.request_id;
    };

    // Kept: shipping publishes shipment.created for the request well within 3 s; several passes after the deadline, nothing was posted.
    await pay("in-1");
    const kept = await requestOf("in-1");
    await eventually("shipping published shipment.created for in-1", async () => {
      const rows = await shipping.jfast.require<DatabaseProvider>("database").sql.query(`SELECT 1 FROM jfast_outbox WHERE kind = 'event' AND (body ->> 'requestId') = $1 AND (body ->> 'type') = 'shipment.created'`, [kept]);
      return rows.length === 1;
    }, 60_000);
    await sleep(5_000);
    expect(hooks.bodies).toEqual([]);

    // Broken at the subscriber job: shipping's job keeps failing past the deadline.
    control.fail = true;
    await pay("in-2");
    const late = await requestOf("in-2");
    const firing = await eventually("the firing notification", async () => hooks.bodies[0], 30_000);
    expect(firing).toMatchObject({ alert: "invoices ship", rule: "promise", state: "firing", value: 1, threshold: 1, service: "billing", window: "1m" });
    expect(firing.promise).toMatchObject({
      when: "invoice.paid",
      then: "shipment.created",
      within: "3s",
      broken: 1,
      example: { requestId: late, hop: "subscriber_job", service: "shipping", detail: expect.stringMatching(/shipping's job shipping\.ship \(.+\) is (waiting to retry after \d+ failed attempts?|running).*the carrier API is down/) },
    });
    expect(firing.text).toContain("late at the subscriber job (shipping)");
    // The history keeps what the notification named (migration 0042): the line and the request, hop and service.
    const [stored] = await billing.require<DatabaseProvider>("database").sql.query<{ detail: string; request_id: string; hop: string; hop_service: string }>(
      "SELECT detail, request_id, hop, hop_service FROM jfast_alert_history WHERE state = 'firing' ORDER BY id LIMIT 1",
    );
    expect(stored).toMatchObject({ request_id: late, hop: "subscriber_job", hop_service: "shipping" });
    expect(stored!.detail.startsWith(`request ${late}: late at subscriber_job — shipping's job shipping.ship `)).toBe(true);

    // The carrier is back: the retry publishes shipment.created, late; no broken request remains, and it resolves.
    control.fail = false;
    const resolved = await eventually("the resolved notification", async () => hooks.bodies[1], 30_000);
    expect(resolved).toMatchObject({ alert: "invoices ship", state: "resolved", value: 0, promise: { broken: 0, example: null } });

    // Broken at Kafka: shipping is stopped; billing's row reaches the topic and nobody consumes it.
    await shipping.stop();
    const port = shipping.port;
    await pay("in-3");
    const unheard = await requestOf("in-3");
    const second = await eventually("the second firing notification", async () => hooks.bodies[2], 30_000);
    expect(second).toMatchObject({ state: "firing", value: 1, promise: { broken: 1, example: { requestId: unheard, hop: "kafka", service: "shipping" } } });
    expect((second.promise as { example: { detail: string } }).example.detail).toMatch(new RegExp(`invoice\\.paid reached topic ${invoices.replace(".", "\\.")} at .+ shipping did not answer`));

    // shipping is back on the same address: it consumes the event, publishes shipment.created, and the alert resolves.
    shipping = await startShipping(port);
    const third = await eventually("the second resolved notification", async () => hooks.bodies[3], 60_000);
    expect(third).toMatchObject({ state: "resolved", value: 0 });
    await sleep(1_000);
    expect(hooks.bodies).toHaveLength(4);
  });
});

describe("promise alerts: the hop a request is late at", () => {
  const row = {
    id: "event:invoices:e-1",
    destination: "invoices",
    attempts: 3,
    createdAt: "2026-12-06T10:00:00.000Z",
    deliveredAt: null,
    diedAt: null,
    eventId: "e-1",
    requestId: "r-1",
    lastError: "KafkaJSConnectionError: Connection error: connect ECONNREFUSED",
  };
  const view = (service: string, entries: TraceView["entries"]): TraceView => ({ service, id: "r-1", matched: "request", requestId: "r-1", entries, complete: true, notes: [] });
  const job = (service: string, id: string, name: string, outcome: TraceView["entries"][number]["outcome"], at: string): TraceView["entries"][number] => ({
    kind: "job",
    id,
    service,
    name,
    startedAt: at,
    finishedAt: null,
    durationMs: null,
    outcome,
    parentId: null,
    requestId: "r-1",
  });

  it("an outbox row the relay has not sent, or gave up on, is late at the outbox", () => {
    const pending = lateHop({ row: { ...row, state: "pending" }, service: "billing", views: [], unreachable: [], publishers: null, when: "invoice.paid", then: "shipment.created" });
    expect(pending).toMatchObject({ hop: "outbox", service: "billing" });
    expect(pending.detail).toContain("still pending after 3 attempts; last error: KafkaJSConnectionError");
    const dead = lateHop({ row: { ...row, state: "dead", diedAt: row.createdAt }, service: "billing", views: [], unreachable: [], publishers: null, when: "invoice.paid", then: "shipment.created" });
    expect(dead.detail).toContain("the relay gave up on the outbox row event:invoices:e-1 after 3 attempts");
  });

  it("a finished subscriber job and a later job not finished is late at the other service's job; all finished, it says none published", () => {
    const delivered = { ...row, state: "delivered" as const, deliveredAt: "2026-12-06T10:00:01.000Z" };
    const received = job("shipping", "j-1", "shipping.receive", "completed", "2026-12-06T10:00:02.000Z");
    const label = job("shipping", "j-2", "shipping.label", "running", "2026-12-06T10:00:03.000Z");
    const base = { row: delivered, service: "billing", unreachable: [], when: "invoice.paid", then: "shipment.created" };
    const views = [view("billing", []), view("shipping", [received, label]), view("audit", [])];
    // The contracts graph says shipping publishes shipment.created: audit's silence does not count.
    expect(lateHop({ ...base, views, publishers: ["shipping"] })).toMatchObject({ hop: "publishing_job", service: "shipping", detail: expect.stringContaining("shipping's job shipping.label (j-2) is running") });
    const done = lateHop({ ...base, views: [view("billing", []), view("shipping", [received, { ...label, outcome: "completed" }])], publishers: null });
    expect(done).toMatchObject({ hop: "publishing_job", service: "shipping" });
    expect(done.detail).toContain("none published shipment.created");
  });
});

describe("promise alerts are checked at load", () => {
  const load = loadBillingToml;
  const promise = (more = "") => `[[alerts]]\nname = "invoices ship"\nrule = "promise"\nthreshold = 1\nwebhook = "https://hooks.example.com/jfast"\n${more}\n`;

  it("takes when, then and within, and the other services with their tokens from the environment", async () => {
    const config = (await load(
      `${promise(`when = "invoice.paid"\nthen = "shipment.created"\nwithin = "5m"`)}\n[[alerting.services]]\nname = "shipping"\nurl = "http://127.0.0.1:8001/"\ntoken_env = "SHIPPING_TOKEN"\n`,
      { SHIPPING_TOKEN: "t-1", JFAST_ALERTING_SERVICES: '[{"name":"audit","url":"http://127.0.0.1:8002","token":"t-2"}]' },
    )) as Awaited<ReturnType<typeof loadConfig>>;
    expect(config.alerts?.rules[0]).toMatchObject({ rule: "promise", when: "invoice.paid", then: "shipment.created", within: "5m" });
    expect(config.alerts?.services).toEqual([
      { name: "shipping", url: "http://127.0.0.1:8001", token: "t-1" },
      { name: "audit", url: "http://127.0.0.1:8002", token: "t-2" },
    ]);
  });

  it("refuses a promise without its fields, with a task, and a service whose token variable is unset, naming the fix", async () => {
    expect(((await load(promise(`when = "invoice.paid"`))) as Error).message).toContain('a promise needs then: when = "invoice.paid", then = "shipment.created", within = "5m"');
    expect(((await load(promise(`when = "invoice.paid"\nthen = "invoice.paid"\nwithin = "5m"`))) as Error).message).toContain("give another event type");
    expect(((await load(promise(`when = "a.b"\nthen = "c.d"\nwithin = "5m"\ntask = "x"`))) as Error).message).toContain("a promise follows events by request id");
    expect(((await load(`[[alerts]]\nname = "d"\nrule = "dead_letters"\nthreshold = 1\nwithin = "5m"\nwebhook = "https://h.example.com"\n`)) as Error).message).toContain('within belongs to rule = "promise" only');
    const unset = (await load(`[[alerting.services]]\nname = "shipping"\nurl = "http://127.0.0.1:8001"\ntoken_env = "SHIPPING_TOKEN"\n`)) as Error & { code: string };
    expect(unset.code).toBe("CONFIG_INVALID");
    expect(unset.message).toContain("reads its token from SHIPPING_TOKEN, which is not set");
  });

  it("refuses at start a promise where there is no outbox (NOT_SUPPORTED), no Kafka, or a when event the service does not publish", async () => {
    const start = async (plugins: string, sections: string, rule: string, source?: string): Promise<Error & { code?: string }> => {
      const root = await mkdtemp(path.join(tmpdir(), "jfast-promise-start-"));
      const schema = uniqueSchema("promise_l");
      try {
        await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "billing"\n\n[plugins]\nenabled = [${plugins}]\n\n${sections.replaceAll("SCHEMA", schema)}\n\n${rule}`);
        if (source) {
          await mkdir(path.join(root, "modules", "billing"), { recursive: true });
          await writeFile(path.join(root, "modules", "billing", "tasks.ts"), source);
        }
        const jfast = await createJfast({ root, env: {}, logger: createLogger({ service: "billing", level: "silent" }) });
        try {
          await jfast.start();
        } catch (error) {
          return error as Error & { code?: string };
        } finally {
          await jfast.stop().catch(() => undefined);
        }
        throw new Error("it started");
      } finally {
        await rm(root, { recursive: true, force: true });
        await dropSchema(schema);
      }
    };
    const rule = (when: string) => promise(`when = "${when}"\nthen = "shipment.created"\nwithin = "5m"`);
    const memory = await start(`"queue"`, `[plugin.queue]\nbackend = "memory"`, rule("invoice.paid"));
    expect(memory.code).toBe("NOT_SUPPORTED");
    expect(memory.message).toContain("the memory queue without the database plugin keeps no outbox");
    const pg = `[plugin.database]\nurl = "${PG_URL}"\nschema = "SCHEMA"\n\n[plugin.queue]\nbackend = "postgres"`;
    const noKafka = await start(`"database", "queue", "outbox"`, pg, rule("invoice.paid"));
    expect(noKafka.code).toBe("CONFIG_PLUGIN_MISSING");
    expect(noKafka.message).toContain("kafka is not enabled");
    const source = [
      `import { task, Event } from ${JSON.stringify(RUNTIME_ENTRY)};`,
      `export const pay = task("billing.pay", { session: true }, async (payload, { ctx, session }) => {`,
      `  await ctx.require("outbox").publish(session, "invoices", new Event({ type: "invoice.paid", data: payload }));`,
      `});`,
      ``,
    ].join("\n");
    const typo = await start(`"database", "queue", "outbox", "kafka"`, `${pg}\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("billing")}"`, rule("invoice.payd"), source);
    expect(typo.code).toBe("CONFIG_INVALID");
    expect(typo.message).toContain('no module of billing publishes "invoice.payd"');
    expect(typo.message).toContain('did you mean when = "invoice.paid"?');
    const alone = await start(`"database", "queue", "outbox", "kafka"`, `${pg}\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("billing")}"`, rule("invoice.paid"), source);
    expect(alone.code).toBe("CONFIG_INVALID");
    expect(alone.message).toContain('no module of billing publishes "shipment.created", by its contracts graph, and no other service is listed to publish it');
    expect(alone.message).toContain("[[alerting.services]]");
  });
});

describe("promise alerts made at run time", () => {
  const create = (app: Awaited<ReturnType<typeof startAdminApp>>) =>
    call(app.jfast, "alerts.create", {
      token: DASHBOARD,
      actor: "operator ana",
      mutation: true,
      input: { name: "invoices ship", rule: "promise", when: "invoice.paid", then: "shipment.created", within: "5m", threshold: 1, webhook: "https://hooks.example.com/jfast" },
    });

  it("are refused by alerts.create where the service has no outbox, naming where to make them", { timeout: 30_000 }, async () => {
    const app = await startAdminApp({ setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, cleanup: async () => {} }) });
    try {
      const created = await create(app);
      expect(created.error?.message).toContain('alert "invoices ship" is a promise, which follows the invoice.paid events through the outbox to Kafka, and database, outbox and kafka are not enabled here');
      expect(created.error?.message).toContain("make it in the service that publishes invoice.paid through its outbox to Kafka (jfast docs alerts#promises)");
      expect((await call(app.jfast, "alerts.list", { token: DASHBOARD, actor: "operator ana" })).data.alerts).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("are refused by alerts.create where the service has the outbox and no Kafka, as at start", { timeout: 30_000 }, async () => {
    const schema = uniqueSchema("promise_k");
    const app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue", "outbox"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 3\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      }),
    });
    try {
      const created = await create(app);
      expect(created.error?.message).toContain("and kafka is not enabled here");
      expect((await call(app.jfast, "alerts.list", { token: DASHBOARD, actor: "operator ana" })).data.alerts).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe("promise alerts: a when event the relay has not sent", () => {
  const cleanup = createCleanup();
  beforeAll(requireBroker);
  afterEach(() => cleanup.run());

  it("is late at the outbox, naming the row", { timeout: 60_000 }, async () => {
    const schema = uniqueSchema("promise_o");
    cleanup.add(() => dropSchema(schema));
    const hooks = await receiver();
    cleanup.add(() => hooks.close());
    const root = await serviceRoot(
      cleanup,
      "billing",
      [
        `[plugins]\nenabled = ["database", "queue", "outbox", "kafka"]`,
        `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2`,
        `[plugin.queue]\nbackend = "postgres"`,
        `[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("billing")}"\n`,
      ].join("\n\n"),
      `export {};\n`,
    );
    // No background work in this process: no relay sends the outbox's rows.
    const billing = await createJfast({ root, env: {}, background: false, logger: createLogger({ service: "billing", level: "silent" }) });
    await billing.start();
    cleanup.add(() => billing.stop());
    const outbox = billing.require<Outbox>("outbox");
    const topic = uniqueName("invoices");
    const requestId = uniqueName("req");
    await billing.withRequest({ requestId }, () =>
      billing.require<DatabaseProvider>("database").transaction((tx) => outbox.publish(tx, topic, new Event({ type: "invoice.paid", data: { invoice: "in-9" }, key: "in-9" }))),
    );

    const sources = { service: { name: "billing", environment: "test" }, plugins: ["database", "queue", "outbox", "kafka"], queue: () => billing.require<QueueProvider>("queue"), outbox: () => outbox, redaction: createRedaction({ fields: [], defaults: true }) };
    const logger = createLogger({ service: "billing", level: "silent" });
    const rule = alertRuleSchema.parse({ name: "invoices ship", rule: "promise", when: "invoice.paid", then: "shipment.created", within: "500ms", window: "1m", threshold: 1, cooldown: "0s", webhook: hooks.url });
    const alerter = createAlerter({
      config: { ...resolveAlerting([rule], undefined), intervalMs: 100 },
      store: createMemoryAlertStore(),
      queue: billing.require<QueueProvider>("queue"),
      service: { name: "billing", environment: "test" },
      logger,
      timer: false,
      promises: createPromiseChecker({ service: "billing", outbox: () => outbox, trace: (id) => gatherTrace(sources, id, 200), graph: async () => null, peers: [], timeoutMs: 5_000, logger }),
    });
    cleanup.add(() => alerter.stop());
    await sleep(700);
    expect(await alerter.runOnce()).toBe(true);
    await alerter.settled();
    expect(hooks.bodies).toHaveLength(1);
    expect(hooks.bodies[0]).toMatchObject({
      state: "firing",
      value: 1,
      promise: { broken: 1, example: { requestId, hop: "outbox", service: "billing", detail: expect.stringContaining(`is still pending after 0 attempts: the relay has not sent invoice.paid to topic ${topic}`) } },
    });
    expect(hooks.bodies[0]!.text).toContain("late at the outbox (billing)");
  });
});
