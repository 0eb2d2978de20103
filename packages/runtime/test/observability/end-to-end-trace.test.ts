import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { createJfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { on } from "../../src/kafka/on.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { BROKER, createCleanup, eventually, requireBroker, uniqueName } from "../kafka/harness.js";
import { copyFixture, dropSchema, PG_URL, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";
import { flatten, renderTree } from "./spans.js";

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

const TRACE_ID = "5e1f0b2a9c8d4e3f8a7b6c5d4e3f2a1b";
const REQUEST_SPAN = "a1b2c3d4e5f60718";

/**
 * One trace across every hop at once: an HTTP request with a traceparent → outbox.enqueue in the request's
 * transaction → the PostgreSQL queue → a worker runs invoice.finalize → its handler publishes a local event (the
 * ledger's subscriber runs) and invoice.paid through the outbox relay to Kafka → the shipping service's on()
 * handler. Each hop is tested on its own elsewhere; here the chain of parents must lead from the last span
 * back to the request.
 */
describe("one trace from an HTTP request to another service's handler", () => {
  it("HTTP → outbox → queue → worker → local event + Kafka → shipping's handler, every span in the request's trace", async () => {
    const topic = uniqueName("invoices");
    (globalThis as Record<string, unknown>).__jfastTraceTopic = topic;
    const booked = ((globalThis as Record<string, unknown>).__jfastLedgerBooked ??= []) as string[];
    const schema = uniqueSchema("e2etrace");
    cleanup.add(() => dropSchema(schema));
    const fixture = await copyFixture("traced-billing");
    cleanup.add(fixture.remove);

    const shippingSpans = new InMemorySpanExporter();
    const shipped: string[] = [];
    // A service of its own with only the events plugin, hearing billing on Kafka.
    const shippingRoot = await mkdtemp(path.join(tmpdir(), "jfast-e2e-trace-shipping-"));
    cleanup.add(() => rm(shippingRoot, { recursive: true, force: true }));
    await writeFile(
      path.join(shippingRoot, "jfast.toml"),
      `[service]\nname = "shipping"\n\n[plugins]\nenabled = ["kafka", "telemetry"]\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("shipping")}"\n`,
    );
    const shipping = await createJfast({
      root: shippingRoot,
      env: {},
      logger: silentLogger,
      handlers: [on(topic, (event) => void shipped.push((event.data as { invoice_id: string }).invoice_id))],
      telemetry: { spanExporter: shippingSpans },
    });
    cleanup.add(() => shipping.stop());
    await shipping.start();

    const billingSpans = new InMemorySpanExporter();
    const billing = await createJfast({
      root: fixture.root,
      env: {},
      logger: silentLogger,
      config: { plugin: { database: { url: PG_URL, schema, pool_size: 4 }, kafka: { bootstrap_servers: BROKER, consumer_group: uniqueName("billing") } } },
      telemetry: { spanExporter: billingSpans },
    });
    cleanup.add(() => billing.stop());
    await billing.start();
    const worker = billing.createWorker({ concurrency: 2 });
    worker.start();
    cleanup.add(() => worker.stop({ graceMs: 0 }));

    // The service's own route: the request context comes from the headers through jfast's node middleware.
    const context = billing.middleware.node();
    const server = http.createServer((req, res) =>
      context(req, res, () => {
        const database = billing.require<DatabaseProvider>("database");
        const outbox = billing.require<Outbox>("outbox");
        database
          .transaction((tx) => outbox.enqueue(tx, new Job({ task: "invoice.finalize", payload: { invoice_id: "inv-42" } })))
          .then(() => res.writeHead(202).end(), (error: unknown) => res.writeHead(500).end(String(error)));
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/invoices/inv-42/finalize`, {
      method: "POST",
      headers: { traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01`, "x-tenant-id": "acme" },
    });
    expect(answer.status).toBe(202);

    await eventually("the ledger's subscriber to run", () => booked.includes("inv-42"), 30_000);
    await eventually("shipping's handler to run", () => shipped.includes("inv-42"), 60_000);
    await eventually("shipping's process span to end", () => shippingSpans.getFinishedSpans().some((s) => s.name === `process ${topic}`), 30_000);

    const spans = [...billingSpans.getFinishedSpans(), ...shippingSpans.getFinishedSpans()];
    console.log(`span tree:\n${renderTree(flatten(spans, "billing+shipping"))}`);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([TRACE_ID]));

    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    /** The names from a span up to the request, following parents across both services. */
    const chain = (span: ReadableSpan): string[] => {
      const names: string[] = [];
      for (let at: ReadableSpan | undefined = span; at; at = byId.get(at.parentSpanContext?.spanId ?? "")) {
        names.push(at.name);
        if (at.parentSpanContext?.spanId === REQUEST_SPAN) return [...names, "(the HTTP request)"];
      }
      return [...names, "(a broken link)"];
    };
    const shippingProcess = spans.find((s) => s.name === `process ${topic}`)!;
    expect(chain(shippingProcess)).toEqual([`process ${topic}`, `publish ${topic}`, "process invoice.finalize", "publish jfast.jobs", "(the HTTP request)"]);
    const ledger = spans.find((s) => s.name === "process invoice.finalized->ledger.book")!;
    expect(chain(ledger)).toEqual([
      "process invoice.finalized->ledger.book",
      "publish jfast.jobs",
      "publish billing.local",
      "process invoice.finalize",
      "publish jfast.jobs",
      "(the HTTP request)",
    ]);
  });
});
