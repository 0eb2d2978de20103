import { randomBytes } from "node:crypto";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, REPO_ROOT, start, type Running } from "./support/processes.js";

// Drives apps/example exactly as the README tells a newcomer to: `npx jfast dev` in its directory, on its
// default configuration (PostgreSQL embedded under apps/example/.jfast), reached only over HTTP. Then
// `npm run dev`'s launcher (scripts/dev.mjs) with both example services, and without the servers they need.
// Kafka topics and groups get a prefix of this run, shipping's Redis keys a queue name of this run.
const EXAMPLE = path.join(REPO_ROOT, "apps/example");
const DEV_SCRIPT = path.join(REPO_ROOT, "scripts/dev.mjs");
const REDIS_URL = "redis://127.0.0.1:6379";
const VIEWER = `viewer-${randomBytes(12).toString("hex")}`;

let dev: Running | null = null;
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  if (dev && dev.child.exitCode === null) {
    // SIGTERM first: the launcher stops the services it started (each in its own process group) before exiting.
    process.kill(-dev.child.pid!, "SIGTERM");
    const stopped = await Promise.race([dev.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 45_000))]);
    if (!stopped) {
      process.kill(-dev.child.pid!, "SIGKILL");
      await dev.exited;
    }
  }
  dev = null;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function runId(): string {
  return randomBytes(4).toString("hex");
}

async function deleteRedisNamespace(name: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`*{${name}}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

async function eventsStatus(base: string) {
  const response = await fetch(`${base}/jfast/admin/events.status`, { headers: { authorization: `Bearer ${VIEWER}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: { data: EventsStatus } }).result.data;
}

interface EventsStatus {
  enabled: boolean;
  reported: boolean;
  turnedOff: boolean;
  group: string | null;
  error: string | null;
  partitions: { topic: string; partition: number; committedOffset: string | null; endOffset: string; lag: number; blocked: unknown }[];
}

describe("apps/example under `npx jfast dev`", () => {
  it("serves /ready on PORT, and a tenant's request enqueues a job that runs for that tenant", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    dev = start("npx", ["jfast", "dev"], { cwd: EXAMPLE, env: { PORT: String(port), DATABASE_URL: "", KAFKA_TOPIC_PREFIX: `e2e-${runId()}.` }, group: true });
    await dev.waitFor('"msg":"worker started"', 150_000);

    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    const report = (await ready.json()) as { status: string; checks: { queue: { backend: string } } };
    expect(report.checks.queue.backend).toBe("postgres");

    const acme = { "x-tenant-id": "acme", "content-type": "application/json" };
    const created = await fetch(`${base}/invoices`, { method: "POST", headers: acme, body: JSON.stringify({ customer_email: "ap@acme.test", amount_cents: 4200 }) });
    expect(created.status).toBe(201);
    const invoice = (await created.json()) as { id: string };

    const sent = await fetch(`${base}/invoices/${invoice.id}/send`, { method: "POST", headers: acme });
    expect(sent.status).toBe(202);
    const { job_id } = (await sent.json()) as { job_id: string };

    // The task wrote emails_sent with currentTenantId() as seen inside the handler.
    const emails = await eventually(
      async () => {
        const body = (await (await fetch(`${base}/invoices/${invoice.id}`, { headers: acme })).json()) as { status: string; emails: { tenantId: string; jobId: string }[] };
        return body.emails.length > 0 ? body : undefined;
      },
      { what: "the invoice email to be sent", timeoutMs: 60_000 },
    );
    expect(emails.status).toBe("sent");
    expect(emails.emails).toEqual([expect.objectContaining({ tenantId: "acme", jobId: job_id })]);

    // Another tenant sees none of it; a request without a tenant is refused.
    expect((await fetch(`${base}/invoices/${invoice.id}`, { headers: { "x-tenant-id": "globex" } })).status).toBe(404);
    expect((await fetch(`${base}/invoices`, { method: "POST", body: "{}" })).status).toBe(400);
    // The outbox write happened in the request's transaction: no invoice, no job.
    expect((await fetch(`${base}/invoices/does-not-exist/send`, { method: "POST", headers: acme })).status).toBe(404);

    // A receipt with a large total: extraction runs, then an alert job enqueued from inside that task.
    const receipt = (await (await fetch(`${base}/receipts`, { method: "POST", headers: acme, body: JSON.stringify({ text: "Desk\nTOTAL: $2,350.00" }) })).json()) as { id: string };
    const alerts = await eventually(
      async () => {
        const rows = (await (await fetch(`${base}/alerts`, { headers: acme })).json()) as { subject: string; tenantId: string; totalCents: number }[];
        return rows.find((a) => a.subject.includes(receipt.id));
      },
      { what: "the alert for the large receipt", timeoutMs: 60_000 },
    );
    expect(alerts).toMatchObject({ tenantId: "acme", totalCents: 235_000 });

    const stats = (await (await fetch(`${base}/queue/stats`)).json()) as { tasks: string[] };
    expect(stats.tasks).toEqual(expect.arrayContaining(["alert.notify", "invoice.send_email", "receipt.extract"]));

    process.kill(-dev.child.pid!, "SIGTERM");
    const exit = await dev.exited;
    expect(exit.stdout + exit.stderr).toContain('"msg":"stopped"');
  });

  it("npm run dev's launcher runs billing and shipping over Kafka and Redis: a paid invoice ships and billing records the shipment", async () => {
    const [billingPort, shippingPort] = [await freePort(), await freePort()];
    const [billing, shipping] = [`http://127.0.0.1:${billingPort}`, `http://127.0.0.1:${shippingPort}`];
    const run = runId();
    const prefix = `e2e-${run}.`;
    const queue = `shipping-e2e-${run}`;
    cleanups.push(() => deleteRedisNamespace(queue));
    dev = start(process.execPath, [DEV_SCRIPT, "--no-dashboard"], {
      env: {
        PORT: String(billingPort),
        SHIPPING_PORT: String(shippingPort),
        DATABASE_URL: "",
        KAFKA_BROKERS: "127.0.0.1:9092",
        REDIS_URL,
        KAFKA_TOPIC_PREFIX: prefix,
        JFAST_QUEUE_NAME: queue,
        JFAST_ADMIN_TOKENS: `e2e:viewer:${VIEWER}`,
        JFAST_DISABLE_PLUGINS: "",
      },
      group: true,
    });
    await dev.waitFor("[dev] kafka       127.0.0.1:9092", 30_000);
    expect(dev.output).toContain("[dev] dashboard   not started (--no-dashboard); it would show: billing, shipping");
    for (const base of [billing, shipping]) {
      await eventually(async () => ((await fetch(`${base}/ready`).catch(() => null))?.status === 200 ? true : undefined), { what: `${base}/ready`, timeoutMs: 150_000 });
    }
    const ready = (await (await fetch(`${shipping}/ready`)).json()) as { checks: { queue: { backend: string }; events: { status: string; consumerGroup: string } } };
    expect(ready.checks.queue.backend).toBe("redis");
    expect(ready.checks.events).toMatchObject({ status: "ok", consumerGroup: `${prefix}shipping` });

    const acme = { "x-tenant-id": "acme", "content-type": "application/json" };
    const invoice = (await (await fetch(`${billing}/invoices`, { method: "POST", headers: acme, body: JSON.stringify({ customer_email: "ap@acme.test", amount_cents: 4200 }) })).json()) as { id: string };
    const paid = await fetch(`${billing}/invoices/${invoice.id}/pay`, { method: "POST", headers: acme });
    expect(paid.status).toBe(202);
    expect((await fetch(`${billing}/invoices/${invoice.id}/pay`, { method: "POST", headers: acme })).status).toBe(409);

    // billing → Kafka (outbox relay) → shipping's on("invoices") → a Redis job → the shipment, stored.
    const [shipment] = await eventually(
      async () => {
        const rows = (await (await fetch(`${shipping}/shipments?invoice_id=${invoice.id}`, { headers: acme })).json()) as { id: string; trackingCode: string; tenantId: string }[];
        return rows.length > 0 ? rows : undefined;
      },
      { what: "the shipment in shipping", timeoutMs: 60_000 },
    );
    expect(shipment).toMatchObject({ id: `shp-${invoice.id}`, tenantId: "acme" });

    // shipping → Kafka → billing's on("shipments") → the shipment recorded on the invoice, for its tenant.
    const recorded = await eventually(
      async () => {
        const body = (await (await fetch(`${billing}/invoices/${invoice.id}`, { headers: acme })).json()) as { status: string; shipmentId: string | null; trackingCode: string | null; emails: { recipient: string }[] };
        return body.shipmentId ? body : undefined;
      },
      { what: "billing to record the shipment", timeoutMs: 60_000 },
    );
    expect(recorded).toMatchObject({ status: "paid", shipmentId: shipment!.id, trackingCode: shipment!.trackingCode });
    // The same invoice.paid also reached billing's own subscriber: the payment confirmation email.
    const confirmed = await eventually(
      async () => {
        const body = (await (await fetch(`${billing}/invoices/${invoice.id}`, { headers: acme })).json()) as { emails: { recipient: string }[] };
        return body.emails.length > 0 ? body.emails : undefined;
      },
      { what: "the payment confirmation", timeoutMs: 60_000 },
    );
    expect(confirmed).toEqual([expect.objectContaining({ recipient: "ap@acme.test" })]);
    // The order's fulfilment flow, written in the paying transaction (modules/fulfilment): charge and reserve, then
    // ship reading both results, then the tracking email reading ship's.
    const { flow_id: flowId } = (await paid.json()) as { flow_id: string };
    expect(flowId).toMatch(/^[0-9a-f-]{36}$/);
    await eventually(async () => (dev!.output.includes(`subject="Your order for invoice ${invoice.id} is on its way"`) ? true : undefined), {
      what: "the fulfilment flow's tracking email",
      timeoutMs: 60_000,
    });
    expect((await (await fetch(`${shipping}/shipments`, { headers: { "x-tenant-id": "globex" } })).json())).toEqual([]);

    // The admin API of each service reports its group's partitions, all caught up.
    for (const [base, group, topic] of [[shipping, `${prefix}shipping`, `${prefix}invoices`], [billing, `${prefix}billing`, `${prefix}shipments`]] as const) {
      const status = await eventually(
        async () => {
          const current = await eventsStatus(base);
          return current.partitions.some((p) => p.committedOffset !== null) && current.partitions.every((p) => p.lag === 0) ? current : undefined;
        },
        { what: `${group} to commit past every message`, timeoutMs: 30_000 },
      );
      expect(status).toMatchObject({ enabled: true, reported: true, turnedOff: false, group, error: null });
      expect(status.partitions.every((p) => p.topic === topic && p.blocked === null)).toBe(true);
    }

    process.kill(-dev.child.pid!, "SIGTERM");
    const exit = await dev.exited;
    expect(exit.code).toBe(0);
    expect(exit.stdout + exit.stderr).toContain('"service":"shipping","processed":1,"msg":"stopped"');
  });

  it("npm run dev's launcher without Kafka or Redis: billing starts without its kafka plugin, shipping is skipped, and both say how to turn them on", async () => {
    const [billingPort, kafkaPort, redisPort] = [await freePort(), await freePort(), await freePort()];
    const billing = `http://127.0.0.1:${billingPort}`;
    dev = start(process.execPath, [DEV_SCRIPT, "--no-dashboard"], {
      env: {
        PORT: String(billingPort),
        DATABASE_URL: "",
        // Ports nothing listens on: this machine "has" neither server.
        KAFKA_BROKERS: `127.0.0.1:${kafkaPort}`,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        KAFKA_TOPIC_PREFIX: "",
        JFAST_ADMIN_TOKENS: `e2e:viewer:${VIEWER}`,
        JFAST_DISABLE_PLUGINS: "",
      },
      group: true,
    });
    await dev.waitFor('"msg":"worker started"', 150_000);
    const output = dev.output;
    expect(output).toContain(`[dev] kafka is off: no broker at 127.0.0.1:${kafkaPort}, so billing runs without the kafka plugin`);
    expect(output).toContain("Turn it on: bash docker/kafka/start.sh");
    expect(output).toContain(`[dev] shipping is off: it keeps its jobs in Redis and nothing answers at redis://127.0.0.1:${redisPort}`);
    expect(output).toContain("[dev] dashboard   not started (--no-dashboard); it would show: billing\n");
    expect(output).toContain("the kafka plugin is off (JFAST_DISABLE_PLUGINS)");
    expect(output).not.toContain('"service":"shipping"');

    const ready = (await (await fetch(`${billing}/ready`)).json()) as { status: string; checks: Record<string, unknown> };
    expect(ready.status).toBe("ok");
    expect(ready.checks.events).toBeUndefined();
    expect(await eventsStatus(billing)).toMatchObject({ enabled: false, reported: false, turnedOff: true, partitions: [] });

    // Paying still works: invoice.paid reaches billing's own subscriber; nothing ships.
    const acme = { "x-tenant-id": "acme", "content-type": "application/json" };
    const invoice = (await (await fetch(`${billing}/invoices`, { method: "POST", headers: acme, body: JSON.stringify({ customer_email: "ap@acme.test", amount_cents: 990 }) })).json()) as { id: string };
    expect((await fetch(`${billing}/invoices/${invoice.id}/pay`, { method: "POST", headers: acme })).status).toBe(202);
    const body = await eventually(
      async () => {
        const current = (await (await fetch(`${billing}/invoices/${invoice.id}`, { headers: acme })).json()) as { status: string; shipmentId: string | null; emails: unknown[] };
        return current.emails.length > 0 ? current : undefined;
      },
      { what: "the payment confirmation", timeoutMs: 60_000 },
    );
    expect(body).toMatchObject({ status: "paid", shipmentId: null });
  });
});
