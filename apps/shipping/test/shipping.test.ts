import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJfast, createLogger, Event, on, type AppWorker, type Jfast } from "@jfast/runtime";
import { eventually as waitFor } from "@jfast/runtime/testing";
import { createApp } from "../server.js";
import { createShipmentStore, type Shipment } from "../src/store/shipment-store.js";

// A Kafka consumer group's first join can take several seconds on a busy machine.
const eventually = <T>(what: string, check: () => Promise<T | undefined | null | false>) => waitFor(what, check, 30_000);

// The shipping service as `jfast dev` builds it (this directory's jfast.toml, modules and HTTP app) on the
// real Redis and Kafka, isolated by a queue name (its Redis keys) and a topic prefix (its topics and group)
// of its own. Billing is played by a second service that publishes invoice.paid and listens for the answer.
const ROOT = path.resolve(fileURLToPath(import.meta.url), "../..");
const REDIS_URL = "redis://127.0.0.1:6379";
const BROKERS = "127.0.0.1:9092";
const run = randomBytes(4).toString("hex");
const QUEUE = `shipping-test-${run}`;
const env = { REDIS_URL, KAFKA_BROKERS: BROKERS, KAFKA_TOPIC_PREFIX: `test-${run}.`, JFAST_QUEUE_NAME: QUEUE };

async function requireService(name: string, address: string, fix: string): Promise<void> {
  const [host, port] = address.split(":") as [string, string];
  const open = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    socket.setTimeout(2000);
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
  if (!open) throw new Error(`${name} is not running on ${address}: ${fix}`);
}


const quiet = (service: string) => createLogger({ service, level: "warn" });

let shipping: Jfast;
let worker: AppWorker;
let app: ReturnType<typeof createApp>;
let billing: Jfast;
let billingRoot: string;
const heardBack: Event[] = [];

beforeAll(async () => {
  await requireService("Redis", "127.0.0.1:6379", "start redis-server (see README.md#run-the-tests)");
  await requireService("Kafka", BROKERS, "start it with `bash docker/kafka/start.sh` from the repository root");
  const shipments = createShipmentStore({ url: REDIS_URL, namespace: QUEUE });
  shipping = await createJfast({ root: ROOT, env, providers: { shipments }, logger: quiet("shipping"), config: { plugin: { queue: { poll_interval: 0.2 } } } });
  await shipping.start();
  worker = shipping.createWorker();
  worker.start();
  app = createApp(shipping);

  // Billing's side of the conversation: publishes to "invoices", hears "shipments".
  billingRoot = await mkdtemp(path.join(tmpdir(), "jfast-billing-"));
  await writeFile(path.join(billingRoot, "jfast.toml"), `[service]\nname = "billing"\n\n[plugins]\nenabled = ["kafka"]\n`);
  billing = await createJfast({
    root: billingRoot,
    env: { KAFKA_BROKERS: BROKERS, KAFKA_TOPIC_PREFIX: env.KAFKA_TOPIC_PREFIX },
    logger: quiet("billing"),
    handlers: [on("shipments", (event) => void heardBack.push(event))],
  });
  await billing.start();
});

afterAll(async () => {
  await worker?.stop({ graceMs: 1000 });
  const store = (() => {
    try {
      return shipping?.require("shipments");
    } catch {
      return null;
    }
  })();
  await Promise.allSettled([shipping?.stop(), billing?.stop()]);
  await store?.close();
  if (billingRoot) await rm(billingRoot, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`*{${QUEUE}}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
});

function invoicePaid(tenantId: string, invoiceId: string, amountCents: number): Event {
  return billing.withRequest({ tenantId, requestId: `req-${invoiceId}` }, () =>
    new Event({
      type: "invoice.paid",
      data: { invoice_id: invoiceId, amount_cents: amountCents, customer_email: `ap@${tenantId}.test`, paid_at: new Date().toISOString() },
      key: invoiceId,
    }),
  );
}

async function shipments(tenantId: string | null, query = ""): Promise<{ status: number; body: unknown }> {
  const response = await app.request(`/shipments${query}`, { headers: tenantId ? { "x-tenant-id": tenantId } : {} });
  return { status: response.status, body: await response.json() };
}

describe("apps/shipping on Redis and Kafka", () => {
  it("turns billing's invoice.paid into a queued shipment job, stores the shipment and tells billing with shipment.created", async () => {
    const paid = invoicePaid("acme", `inv-${run}-1`, 4200);
    await billing.require("events").publish("invoices", paid);

    const [shipment] = await eventually("the shipment to be stored", async () => {
      const { body } = await shipments("acme", `?invoice_id=inv-${run}-1`);
      return (body as Shipment[]).length === 1 ? (body as Shipment[]) : null;
    });
    expect(shipment).toMatchObject({ id: `shp-inv-${run}-1`, invoiceId: `inv-${run}-1`, tenantId: "acme", amountCents: 4200, carrier: "standard", status: "created" });
    expect(shipment!.trackingCode).toMatch(/^STD-/);

    // The job ran on the Redis queue under this test's name: its id comes from the event's.
    // Its completion is written just after the handler returns (the shipment is stored within it): wait for it.
    const backend = shipping.require<{ backend: { getJob(p: { id: string }): Promise<{ state: string } | null> } }>("queue").backend;
    const info = await eventually("the shipment job to complete", async () => {
      const job = await backend.getJob({ id: `ship-${paid.id}` });
      return job?.state === "completed" ? job : null;
    });
    expect(info.state).toBe("completed");

    const back = await eventually("billing to hear shipment.created", async () => heardBack.find((e) => (e.data as { invoice_id: string }).invoice_id === `inv-${run}-1`));
    expect(back.type).toBe("shipment.created");
    expect(back.data).toEqual({ shipment_id: shipment!.id, invoice_id: `inv-${run}-1`, carrier: "standard", tracking_code: shipment!.trackingCode });
    // The tenant and request of billing's paying request travelled through the job and back.
    expect(back.tenantId).toBe("acme");
    expect(back.requestId).toBe(`req-inv-${run}-1`);
    expect(back.key).toBe(`inv-${run}-1`);
  });

  it("ships an invoice once when its event is delivered twice, and keeps tenants apart", async () => {
    const paid = invoicePaid("acme", `inv-${run}-2`, 250_000);
    const events = billing.require("events");
    await events.publish("invoices", paid);
    await events.publish("invoices", paid); // a redelivery: same event id
    // Published after both copies, on its own key: once it has shipped, both copies have been consumed.
    await events.publish("invoices", invoicePaid("globex", `inv-${run}-3`, 100));
    await eventually("globex's shipment", async () => ((await shipments("globex")).body as Shipment[]).length === 1);
    await eventually("acme's second shipment", async () => ((await shipments("acme")).body as Shipment[]).length === 2);

    const acme = (await shipments("acme")).body as Shipment[];
    expect(acme.map((s) => s.invoiceId).sort()).toEqual([`inv-${run}-1`, `inv-${run}-2`]);
    expect(acme.find((s) => s.invoiceId === `inv-${run}-2`)).toMatchObject({ carrier: "express", tenantId: "acme" });
    expect((await shipments("globex")).body).toEqual([expect.objectContaining({ invoiceId: `inv-${run}-3`, tenantId: "globex" })]);
    expect((await shipments("initech")).body).toEqual([]);
  });

  it("refuses requests without a tenant and limits out of range", async () => {
    expect((await shipments(null)).status).toBe(400);
    expect((await shipments("acme", "?limit=0")).status).toBe(400);
    expect((await shipments("acme", "?limit=1")).body).toHaveLength(1);
  });

  it("lets other event types on the topic pass without a job", async () => {
    const other = billing.withRequest({ tenantId: "acme" }, () => new Event({ type: "invoice.voided", data: { invoice_id: `inv-${run}-9` }, key: `inv-${run}-9` }));
    await billing.require("events").publish("invoices", [other, invoicePaid("acme", `inv-${run}-10`, 300)]);
    await eventually("the paid invoice behind it to ship", async () => ((await shipments("acme", `?invoice_id=inv-${run}-10`)).body as Shipment[]).length === 1);
    const info = await shipping.require<{ backend: { getJob(p: { id: string }): Promise<unknown> } }>("queue").backend.getJob({ id: `ship-${other.id}` });
    expect(info).toBeNull();
  });
});
