import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { dropQueue as dropRedisQueue, REDIS_URL, uniqueQueue as uniqueRedisQueue } from "../redis/redis-test-env.js";
import { receiver } from "./receiver.js";
import { DASHBOARD, QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "../admin/admin-harness.js";

const ALERTING = (more = "") => `\n[alerting]\ninterval = "150ms"\nretries = 2\nretry_backoff = "50ms"\n${more}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("alerts in jfast.toml are checked at load", () => {
  async function load(alerts: string): Promise<unknown> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-alerts-"));
    try {
      await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "billing"\n\n${alerts}`);
      return await loadConfig({ root, env: {} });
    } catch (error) {
      return error;
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  it("takes a rule with its defaults", async () => {
    const config = (await load(`[[alerts]]\nname = "payments dying"\nrule = "dead_letters"\ntask = "payment.charge"\nthreshold = 1\nwebhook = "https://hooks.example.com/jfast"\n`)) as Awaited<ReturnType<typeof loadConfig>>;
    expect(config.alerts?.rules).toEqual([
      { name: "payments dying", rule: "dead_letters", task: "payment.charge", threshold: 1, window: "5m", webhook: "https://hooks.example.com/jfast", format: "json", cooldown: "1m" },
    ]);
    expect(config.alerts?.intervalMs).toBe(15_000);
  });

  it("refuses a kafka_lag rule in a service without Kafka, naming the fix", async () => {
    const error = (await load(`[[alerts]]\nname = "late"\nrule = "kafka_lag"\nthreshold = 100\nwebhook = "https://hooks.example.com/jfast"\n`)) as Error;
    expect(error.message).toContain('[[alerts]] "late" is a kafka_lag rule, and this service has no Kafka configured');
    expect(error.message).toContain("[plugin.kafka]");
    expect(error.message).toContain("jfast docs alerts#rules");
  });

  it("refuses task and queue together, a bad window, a webhook that is no URL and two alerts of one name", async () => {
    const rule = (name: string, more: string) => `[[alerts]]\nname = "${name}"\nrule = "dead_letters"\nthreshold = 1\n${more}\n`;
    expect(((await load(rule("a", `task = "x"\nqueue = "y"\nwebhook = "https://h.example.com"`))) as Error).message).toContain("give task or queue, not both");
    expect(((await load(rule("a", `window = "five minutes"\nwebhook = "https://h.example.com"`))) as Error).message).toContain('window is a duration such as "5m"');
    expect(((await load(rule("a", `webhook = "hooks"`))) as Error).message).toContain("webhook is the URL");
    const twice = rule("a", `webhook = "https://h.example.com"`);
    expect(((await load(twice + twice)) as Error).message).toContain('two alerts are named "a"');
  });
});

describe("memory: alerts made at run time fire, recover and are retried", () => {
  let app: AdminApp | null = null;
  let hooks: Awaited<ReturnType<typeof receiver>> | null = null;
  afterEach(async () => {
    await app?.close();
    await hooks?.close();
    app = null;
    hooks = null;
  });
  const memory = (more = ""): (() => Promise<AdminBackendSetup>) => async () => ({
    plugins: ["queue"],
    sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}${ALERTING(more)}`,
    cleanup: async () => {},
  });
  const mutate = (procedure: string, input: unknown) => call(app!.jfast, procedure, { token: DASHBOARD, actor: "operator ana", mutation: true, input });

  it("fires once when a rule starts failing and once when it recovers, retrying a failing receiver, with the history", { timeout: 60_000 }, async () => {
    // The receiver fails the first two posts: the firing notification is delivered on its third attempt.
    hooks = await receiver([500, 503]);
    app = await startAdminApp({ setup: memory() });
    const created = await mutate("alerts.create", { name: "too few workers", rule: "workers_below", threshold: 2, window: "1m", cooldown: "0s", webhook: hooks.url });
    expect(created.error).toBeNull();
    await eventually("the firing notification", async () => hooks!.bodies.length >= 1, 20_000);
    const firing = hooks.bodies[0]!;
    expect(firing).toMatchObject({ alert: "too few workers", rule: "workers_below", state: "firing", value: 1, threshold: 2, service: "billing", window: "1m", task: null, queue: null });
    expect(Date.parse(firing.at as string)).not.toBeNaN();
    expect(firing.text).toContain("FIRING");

    const second = app.jfast.createWorker({ concurrency: 1 });
    second.start();
    try {
      await eventually("the resolved notification", async () => hooks!.bodies.length >= 2, 20_000);
      expect(hooks.bodies[1]).toMatchObject({ alert: "too few workers", state: "resolved", value: 2, threshold: 2 });
      // The receiver has the body a moment before the store has the delivery's outcome.
      const history = await eventually("both deliveries recorded", async () => {
        const events = (await call(app!.jfast, "alerts.history", { token: VIEWER, input: { name: "too few workers" } })).data.events as Array<Record<string, unknown>>;
        return events.every((e) => e.delivery !== "pending") && events;
      });
      expect(history.map((e) => [e.state, e.delivery, e.attempts])).toEqual([
        ["resolved", "delivered", 1],
        ["firing", "delivered", 3],
      ]);
      expect(history[1]!.lastError).toContain("503");
      // The webhook's path is not shown to viewers.
      expect(history[0]!.webhook).toBe(new URL(hooks.url).origin + "/…");
      const listed = (await call(app.jfast, "alerts.list", { token: VIEWER })).data;
      expect(listed.alerts).toEqual([expect.objectContaining({ name: "too few workers", source: "runtime", state: "resolved", value: 2, updatedBy: expect.stringContaining("ana") })]);
      // Exactly one post per change of state, plus the two failed attempts.
      await sleep(600);
      expect(hooks.posts()).toBe(4);
    } finally {
      await second.stop({ graceMs: 0 });
    }
  });

  it("records a delivery as failed after every retry, and sends a Slack-compatible body", { timeout: 60_000 }, async () => {
    hooks = await receiver([500, 500, 500]);
    const slack = await receiver();
    try {
      app = await startAdminApp({ setup: memory() });
      expect((await mutate("alerts.create", { name: "down", rule: "workers_below", threshold: 5, cooldown: "0s", webhook: hooks.url })).error).toBeNull();
      expect((await mutate("alerts.create", { name: "down in slack", rule: "workers_below", threshold: 5, format: "slack", webhook: slack.url })).error).toBeNull();
      const failed = await eventually("a failed delivery", async () => {
        const events = (await call(app!.jfast, "alerts.history", { token: VIEWER, input: { name: "down" } })).data.events as Array<Record<string, unknown>>;
        return events.find((e) => e.delivery === "failed");
      });
      expect(failed).toMatchObject({ state: "firing", attempts: 3, deliveredAt: null });
      expect(failed.lastError).toContain("the webhook answered 500: receiver is down");
      await eventually("the Slack body", async () => slack.bodies.length === 1);
      expect(Object.keys(slack.bodies[0]!)).toEqual(["text"]);
      expect(slack.bodies[0]!.text).toContain("[FIRING] billing: down in slack — workers_below of the service is 1 workers online");
      // A rule of jfast.toml cannot be changed at run time; a run-time one is updated and deleted.
      expect((await mutate("alerts.update", { name: "down", rule: "workers_below", threshold: 1, webhook: hooks.url })).error).toBeNull();
      expect((await mutate("alerts.delete", { name: "down" })).error).toBeNull();
      expect((await mutate("alerts.delete", { name: "down" })).error?.data.code).toBe("NOT_FOUND");
      expect((await mutate("alerts.create", { name: "bad", rule: "kafka_lag", threshold: 1, webhook: hooks.url })).error?.message).toContain("this service has no Kafka: configure [plugin.kafka]");
    } finally {
      await slack.close();
    }
  });
});

describe("memory: queue_latency and failure_rate", () => {
  let app: AdminApp | null = null;
  let hooks: Awaited<ReturnType<typeof receiver>> | null = null;
  afterEach(async () => {
    await app?.close();
    await hooks?.close();
    app = null;
    hooks = null;
  });
  const setup = async (): Promise<AdminBackendSetup> => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}${ALERTING()}`, cleanup: async () => {} });
  const mutate = (procedure: string, input: unknown) => call(app!.jfast, procedure, { token: DASHBOARD, actor: "operator ana", mutation: true, input });

  it("queue_latency fires while a job waits past the threshold and resolves once it ran", { timeout: 60_000 }, async () => {
    hooks = await receiver();
    app = await startAdminApp({ setup });
    expect((await mutate("queues.pause", { task: "billing.charge" })).error).toBeNull();
    await app.jfast.require("queue").enqueue([new Job({ task: "billing.charge", payload: { invoice: "inv-wait" } })]);
    expect((await mutate("alerts.create", { name: "charges waiting", rule: "queue_latency", threshold: 0.5, cooldown: "0s", webhook: hooks.url })).error).toBeNull();
    await eventually("the firing notification", async () => hooks!.bodies.length >= 1);
    expect(hooks.bodies[0]).toMatchObject({ alert: "charges waiting", rule: "queue_latency", state: "firing", threshold: 0.5 });
    expect(hooks.bodies[0]!.value).toBeGreaterThanOrEqual(0.5);
    expect((await mutate("queues.resume", { task: "billing.charge" })).error).toBeNull();
    await eventually("the resolved notification", async () => hooks!.bodies.length >= 2);
    expect(hooks.bodies[1]).toMatchObject({ alert: "charges waiting", state: "resolved", value: 0 });
  });

  it("failure_rate fires when the share of failed attempts reaches the threshold", { timeout: 60_000 }, async () => {
    hooks = await receiver();
    app = await startAdminApp({ setup });
    expect((await mutate("alerts.create", { name: "charges failing", rule: "failure_rate", task: "billing.charge", threshold: 50, window: "5m", webhook: hooks.url })).error).toBeNull();
    await app.killCharges(2);
    await eventually("the firing notification", async () => hooks!.bodies.length >= 1, 30_000);
    expect(hooks.bodies[0]).toMatchObject({ alert: "charges failing", rule: "failure_rate", state: "firing", value: 100, threshold: 50, task: "billing.charge" });
  });
});

describe("postgres: three processes send one notification", () => {
  const apps: AdminApp[] = [];
  let hooks: Awaited<ReturnType<typeof receiver>> | null = null;
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await hooks?.close();
    hooks = null;
  });

  it("posts a dead_letters alert once, with its payload, while three processes evaluate", { timeout: 90_000 }, async () => {
    hooks = await receiver();
    const schema = uniqueSchema("alerts");
    const alerts = `\n[[alerts]]\nname = "charges dying"\nrule = "dead_letters"\ntask = "billing.charge"\nthreshold = 1\nwindow = "5m"\ncooldown = "0s"\nwebhook = "${hooks.url}"\n`;
    const setup = (last: boolean) => async (): Promise<AdminBackendSetup> => ({
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 3\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}${ALERTING()}${alerts}`,
      cleanup: last ? () => dropSchema(schema) : async () => {},
    });
    // Closed in reverse: the first one, which drops the schema, last.
    apps.push(await startAdminApp({ setup: setup(true) }));
    apps.push(await startAdminApp({ setup: setup(false) }));
    apps.push(await startAdminApp({ setup: setup(false) }));
    apps.reverse();
    await apps[0]!.killCharges(2);
    await eventually("the notification", async () => hooks!.bodies.length >= 1, 30_000);
    // Many more passes of the three evaluators: still one post.
    await sleep(1500);
    expect(hooks.posts()).toBe(1);
    expect(hooks.bodies[0]).toMatchObject({ alert: "charges dying", rule: "dead_letters", state: "firing", threshold: 1, task: "billing.charge", queue: null, service: "billing", window: "5m" });
    expect(hooks.bodies[0]!.value).toBeGreaterThanOrEqual(1);
    for (const app of apps) {
      const listed = (await call(app.jfast, "alerts.list", { token: VIEWER })).data;
      expect(listed).toMatchObject({ enabled: true, store: "sql", alerts: [expect.objectContaining({ name: "charges dying", source: "config", state: "firing" })] });
    }
    const events = (await call(apps[1]!.jfast, "alerts.history", { token: VIEWER })).data.events as Array<Record<string, unknown>>;
    expect(events).toEqual([expect.objectContaining({ alert: "charges dying", state: "firing", delivery: "delivered", attempts: 1 })]);
    const refused = await call(apps[2]!.jfast, "alerts.delete", { token: DASHBOARD, actor: "operator ana", mutation: true, input: { name: "charges dying" } });
    expect(refused.error?.message).toContain("written in jfast.toml");
  });
});

describe("postgres: a delivery left pending by a process that died", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("is recorded failed, saying so, once every retry's time has passed", { timeout: 60_000 }, async () => {
    const schema = uniqueSchema("alerts");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 3\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}${ALERTING()}\n[[alerts]]\nname = "never"\nrule = "workers_below"\nthreshold = 0\nwebhook = "https://hooks.example.com/never"\n`,
        cleanup: () => dropSchema(schema),
      }),
    });
    // As a process killed between two retries leaves it: pending, one attempt made, an hour ago.
    await withAdmin((client) =>
      client.query(
        `INSERT INTO ${schema}.jfast_alert_history (alert, rule, state, value, threshold, at, webhook, delivery, attempts, last_error)
         VALUES ('payments dying', 'dead_letters', 'firing', 3, 1, now() - interval '1 hour', 'https://hooks.example.com/x', 'pending', 1, 'the webhook answered 502')`,
      ),
    );
    const failed = await eventually("the orphan recorded failed", async () => {
      const events = (await call(app!.jfast, "alerts.history", { token: VIEWER })).data.events as Array<Record<string, unknown>>;
      return events.find((e) => e.delivery === "failed");
    });
    expect(failed).toMatchObject({ alert: "payments dying", attempts: 1 });
    expect(failed.lastError).toBe("the process delivering it stopped after 1 attempt(s); last error: the webhook answered 502");
  });
});

describe("postgres: outbox_lag", () => {
  let app: AdminApp | null = null;
  let hooks: Awaited<ReturnType<typeof receiver>> | null = null;
  afterEach(async () => {
    await app?.close();
    await hooks?.close();
    app = null;
    hooks = null;
  });

  it("fires while a dead outbox row exists and resolves once it is discarded", { timeout: 60_000 }, async () => {
    hooks = await receiver();
    const schema = uniqueSchema("alerts");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue", "outbox"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}${ALERTING()}\n[[alerts]]\nname = "outbox behind"\nrule = "outbox_lag"\nthreshold = 300\ncooldown = "0s"\nwebhook = "${hooks!.url}"\n`,
        cleanup: () => dropSchema(schema),
      }),
    });
    // A row for a queue this service does not have: the relay sets it aside as dead at once.
    const job = new Job({ task: "billing.charge", payload: { invoice: "orphan" } });
    const id = `job:legacy.jobs:${job.id}`;
    await withAdmin((client) => client.query(`INSERT INTO ${schema}.jfast_outbox (id, kind, destination, body) VALUES ($1, 'job', 'legacy.jobs', $2::json)`, [id, JSON.stringify(job.toJSON())]));
    await eventually("the firing notification", async () => hooks!.bodies.length >= 1, 30_000);
    expect(hooks.bodies[0]).toMatchObject({ alert: "outbox behind", rule: "outbox_lag", state: "firing", threshold: 300, task: null, queue: null });
    const dead = (await call(app.jfast, "outbox.dead", { token: VIEWER })).data.rows as Array<{ id: string }>;
    expect(dead.map((r) => r.id)).toEqual([id]);
    expect((await call(app.jfast, "outbox.discard", { token: DASHBOARD, actor: "operator ana", mutation: true, input: { ids: [id] } })).error).toBeNull();
    await eventually("the resolved notification", async () => hooks!.bodies.length >= 2, 30_000);
    expect(hooks.bodies[1]).toMatchObject({ alert: "outbox behind", state: "resolved", value: 0 });
  });
});

describe("postgres: schedule_late", () => {
  let app: AdminApp | null = null;
  let hooks: Awaited<ReturnType<typeof receiver>> | null = null;
  afterEach(async () => {
    await app?.close();
    await hooks?.close();
    app = null;
    hooks = null;
  });

  it("fires when a schedule's ticks were missed", { timeout: 60_000 }, async () => {
    hooks = await receiver();
    const schema = uniqueSchema("alerts");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\nscheduler = true\n${QUEUE_TUNING}${ALERTING()}\n[[alerts]]\nname = "receipts late"\nrule = "schedule_late"\ntask = "billing.send_receipt"\nthreshold = 600\nwebhook = "${hooks!.url}"\n`,
        cleanup: () => dropSchema(schema),
      }),
    });
    expect((await call(app.jfast, "schedules.create", { token: DASHBOARD, actor: "operator ana", mutation: true, input: { name: "receipts", task: "billing.send_receipt", every: { minutes: 1 } } })).error).toBeNull();
    // As a replica left it before every process was down: its last claimed tick ten minutes ago.
    await withAdmin((client) => client.query(`INSERT INTO ${schema}.jfast_schedules (name, tick, claimed_at) VALUES ('receipts', date_trunc('minute', now()) - interval '10 minutes', now() - interval '10 minutes')`));
    await eventually("the firing notification", async () => hooks!.bodies.length >= 1, 30_000);
    expect(hooks.bodies[0]).toMatchObject({ alert: "receipts late", rule: "schedule_late", state: "firing", threshold: 600, task: "billing.send_receipt" });
  });
});

describe("redis: three processes send one notification", () => {
  const apps: AdminApp[] = [];
  let hooks: Awaited<ReturnType<typeof receiver>> | null = null;
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await hooks?.close();
    hooks = null;
  });

  it("posts a workers_below alert once while three processes evaluate, kept in Redis", { timeout: 90_000 }, async () => {
    hooks = await receiver();
    const queue = uniqueRedisQueue("alerts");
    const alerts = `\n[[alerts]]\nname = "short of workers"\nrule = "workers_below"\nthreshold = 5\nwebhook = "${hooks.url}"\n`;
    const setup = (last: boolean) => async (): Promise<AdminBackendSetup> => ({
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}${ALERTING()}${alerts}`,
      cleanup: last ? () => dropRedisQueue(queue) : async () => {},
    });
    apps.push(await startAdminApp({ setup: setup(true) }));
    apps.push(await startAdminApp({ setup: setup(false) }));
    apps.push(await startAdminApp({ setup: setup(false) }));
    apps.reverse();
    await eventually("the notification", async () => hooks!.bodies.length >= 1, 30_000);
    await sleep(1500);
    expect(hooks.posts()).toBe(1);
    expect(hooks.bodies[0]).toMatchObject({ alert: "short of workers", rule: "workers_below", state: "firing", threshold: 5, service: "billing" });
    expect(hooks.bodies[0]!.value).toBeLessThan(5);
    const listed = (await call(apps[2]!.jfast, "alerts.list", { token: VIEWER })).data;
    expect(listed).toMatchObject({ enabled: true, store: "redis", alerts: [expect.objectContaining({ name: "short of workers", state: "firing" })] });
    const events = (await call(apps[0]!.jfast, "alerts.history", { token: VIEWER })).data.events as Array<Record<string, unknown>>;
    expect(events).toEqual([expect.objectContaining({ alert: "short of workers", state: "firing", delivery: "delivered", attempts: 1 })]);
  });
});
