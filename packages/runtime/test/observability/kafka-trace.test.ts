import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import kafkajs from "kafkajs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { currentContext } from "../../src/context/context.js";
import { Event } from "../../src/core/event.js";
import { createJfast } from "../../src/create-jfast.js";
import type { EventsBus } from "../../src/kafka/events-bus.js";
import { on } from "../../src/kafka/on.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { BROKER, createCleanup, eventually, requireBroker, startService, uniqueName } from "../kafka/harness.js";
import { dropSchema, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { flatten, renderTree } from "./spans.js";

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const REQUEST_SPAN = "b7ad6b7169203331";

describe("the trace crosses Kafka", () => {
  it("an on() handler runs in a `process <topic>` span, child of the published event's traceparent, and is the context of what it does", async () => {
    const topic = uniqueName("invoices");
    const group = uniqueName("shipping");
    const root = await mkdtemp(path.join(tmpdir(), "jfast-kafka-trace-"));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "shipping"\n\n[plugins]\nenabled = ["kafka", "telemetry"]\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n`,
    );
    const exporter = new InMemorySpanExporter();
    const seen: Array<string | null | undefined> = [];
    const shipping = await createJfast({
      root,
      env: {},
      logger: silentLogger,
      handlers: [on(topic, () => void seen.push(currentContext()?.traceparent))],
      telemetry: { spanExporter: exporter },
    });
    cleanup.add(() => shipping.stop());
    await shipping.start();
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));

    await billing.jfast.withRequest({ traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () =>
      billing.events.publish(topic, new Event({ type: "invoice.paid", data: { invoice: 7 }, key: "invoice-7" })),
    );
    await eventually("the handler to run", () => seen.length === 1);
    await eventually("its span to end", () => exporter.getFinishedSpans().length === 1);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe(`process ${topic}`);
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(REQUEST_SPAN);
    expect(span!.attributes).toMatchObject({ "messaging.system": "kafka", "messaging.operation": "process", "messaging.destination.name": topic });
    // Inside the handler the current trace is the process span: jobs it enqueues continue from there.
    expect(seen[0]).toBe(`00-${TRACE_ID}-${span!.spanContext().spanId}-01`);
  });

  /** A service in a temporary root with the given plugins, spans kept in memory. */
  async function tracedService(name: string, toml: string, params: { handlers?: ReturnType<typeof on>[] } = {}) {
    const root = await mkdtemp(path.join(tmpdir(), `jfast-kafka-trace-${name}-`));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "${name}"\n\n${toml}`);
    const exporter = new InMemorySpanExporter();
    const jfast = await createJfast({ root, env: {}, logger: silentLogger, handlers: params.handlers ?? [], telemetry: { spanExporter: exporter } });
    cleanup.add(() => jfast.stop());
    await jfast.start();
    return { jfast, exporter };
  }

  /** Reads the topic from its start with a plain kafkajs consumer: the headers exactly as the broker has them. */
  async function readHeaders(topic: string): Promise<Record<string, string>> {
    const kafka = new kafkajs.Kafka({ clientId: "jfast-tests", brokers: [BROKER], logLevel: kafkajs.logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: uniqueName("headers") });
    cleanup.add(() => consumer.disconnect());
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const headers: Record<string, string>[] = [];
    await consumer.run({
      eachMessage: async ({ message }) => {
        headers.push(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])));
      },
    });
    await eventually("the message to be read back", () => headers.length === 1, 30_000);
    return headers[0]!;
  }

  it("events.publish(topic, event) runs in a `publish <topic>` producer span; the message's traceparent header is that span, parent of the consumer's process span", async () => {
    const topic = uniqueName("invoices");
    const group = uniqueName("shipping");
    const seen: string[] = [];
    const shipping = await tracedService(
      "shipping",
      `[plugins]\nenabled = ["kafka", "telemetry"]\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n`,
      { handlers: [on(topic, (event) => void seen.push(event.id))] },
    );
    const billing = await tracedService(
      "billing",
      `[plugins]\nenabled = ["kafka", "telemetry"]\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("billing")}"\n`,
    );
    const events = billing.jfast.require<EventsBus>("events");
    const paid = new Event({ type: "invoice.paid", data: { invoice: 7 }, key: "invoice-7" });
    await billing.jfast.withRequest({ traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () => events.publish(topic, paid));

    const [publish, ...others] = billing.exporter.getFinishedSpans();
    expect(others).toEqual([]);
    expect(publish!.name).toBe(`publish ${topic}`);
    expect(publish!.kind).toBe(SpanKind.PRODUCER);
    expect(publish!.spanContext().traceId).toBe(TRACE_ID);
    expect(publish!.parentSpanContext?.spanId).toBe(REQUEST_SPAN);
    expect(publish!.attributes).toEqual({
      "messaging.system": "kafka",
      "messaging.operation": "publish",
      "messaging.operation.name": "publish",
      "messaging.operation.type": "send",
      "messaging.destination.name": topic,
      "messaging.message.id": paid.id,
      "messaging.kafka.message.key": "invoice-7",
      "server.address": "127.0.0.1",
      "server.port": 9092,
      "jfast.event.type": "invoice.paid",
    });
    const traceparent = `00-${TRACE_ID}-${publish!.spanContext().spanId}-01`;
    expect(await readHeaders(topic)).toMatchObject({ traceparent, "jfast-event-id": paid.id });

    await eventually("the handler to run", () => seen.length === 1);
    await eventually("its span to end", () => shipping.exporter.getFinishedSpans().length === 1);
    const [processSpan] = shipping.exporter.getFinishedSpans();
    expect(processSpan!.name).toBe(`process ${topic}`);
    expect(processSpan!.kind).toBe(SpanKind.CONSUMER);
    expect(processSpan!.spanContext().traceId).toBe(TRACE_ID);
    expect(processSpan!.parentSpanContext?.spanId).toBe(publish!.spanContext().spanId);
    expect(processSpan!.attributes).toMatchObject({
      "messaging.system": "kafka",
      "messaging.operation.type": "process",
      "messaging.destination.name": topic,
      "messaging.message.id": paid.id,
      "messaging.kafka.message.key": "invoice-7",
      "messaging.kafka.offset": 0,
      "messaging.consumer.group.name": group,
    });
    console.log(`span tree (Kafka):\n${renderTree([...flatten([publish!], "billing"), ...flatten([processSpan!], "shipping")])}`);

    // A publish the bus refuses (no key) ends its span as an error.
    await expect(events.publish(topic, new Event({ type: "invoice.void", data: {} }))).rejects.toMatchObject({ code: "EVENT_KEY_MISSING" });
    const failed = billing.exporter.getFinishedSpans()[1]!;
    expect(failed.status.code).toBe(2); // ERROR
    expect(failed.attributes["error.type"]).toBe("JfastError");
  });

  it("an event published through the outbox keeps outbox.publish's span across the relay: no second publish span, the consumer's span is its child", async () => {
    const topic = uniqueName("orders");
    const group = uniqueName("shipping");
    const schema = uniqueSchema("ktrace");
    cleanup.add(() => dropSchema(schema));
    await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"`));
    const seen: string[] = [];
    const shipping = await tracedService(
      "shipping",
      `[plugins]\nenabled = ["kafka", "telemetry"]\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n`,
      { handlers: [on(topic, (event) => void seen.push(event.id))] },
    );
    const shop = await tracedService(
      "shop",
      `[plugins]\nenabled = ["database", "outbox", "kafka", "telemetry"]\n\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2\n\n` +
        `[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${uniqueName("shop")}"\n`,
    );
    const database = shop.jfast.require<DatabaseProvider>("database");
    const outbox = shop.jfast.require<Outbox>("outbox");
    const placed = new Event({ type: "order.placed", data: { order: 3 }, key: "order-3" });
    await shop.jfast.withRequest({ traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () => database.transaction((tx) => outbox.publish(tx, topic, placed)));

    await eventually("the handler to run", () => seen.length === 1, 30_000);
    await eventually("its span to end", () => shipping.exporter.getFinishedSpans().length === 1);
    const [processSpan] = shipping.exporter.getFinishedSpans();
    const published = shop.exporter.getFinishedSpans();
    expect(published.map((s) => [s.name, s.attributes["messaging.system"]])).toEqual([[`publish ${topic}`, "jfast"]]);
    expect(published[0]!.parentSpanContext?.spanId).toBe(REQUEST_SPAN);
    expect(processSpan!.spanContext().traceId).toBe(TRACE_ID);
    expect(processSpan!.parentSpanContext?.spanId).toBe(published[0]!.spanContext().spanId);
  });
});
