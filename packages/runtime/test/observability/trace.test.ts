import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { copyFixture, dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { flatten, renderTree } from "./spans.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const REQUEST_SPAN = "00f067aa0ba902b7";

describe("one trace from the request to the job its event's subscriber enqueued (PostgreSQL)", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it("request → publish order.placed → publish subscriber job → process subscriber → publish mail job → process mail", async () => {
    const schema = uniqueSchema("trace");
    stops.push(() => dropSchema(schema));
    await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".orders (id text PRIMARY KEY)`));
    const fixture = await copyFixture("traced-shop");
    stops.push(fixture.remove);
    const exporter = new InMemorySpanExporter();
    const jfast: Jfast = await createJfast({
      root: fixture.root,
      env: {},
      logger: silentLogger,
      config: { plugin: { database: { url: PG_URL, schema, pool_size: 4 } } },
      telemetry: { spanExporter: exporter },
    });
    stops.push(() => jfast.stop());
    await jfast.start();
    const database = jfast.require<DatabaseProvider>("database");
    const outbox = jfast.require<Outbox>("outbox");

    const event = await jfast.withRequest({ requestId: "req-7", traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () =>
      database.transaction(async (tx) => {
        await database.executorFor(tx).query(`INSERT INTO "${schema}".orders (id) VALUES ($1)`, ["o-1"]);
        const placed = new Event({ type: "order.placed", data: { order_id: "o-1" }, key: "o-1" });
        await outbox.publish(tx, "orders", placed);
        return placed;
      }),
    );
    const sent = ((globalThis as Record<string, unknown>).__jfastMailsSent ??= []) as string[];
    jfast.createWorker({ concurrency: 2 }).start();
    await eventually("the mail job to run", async () => sent.includes("o-1"));
    await eventually("the mail job's span to end", async () => exporter.getFinishedSpans().some((s) => s.name === "process mail.send_receipt"));

    const spans = exporter.getFinishedSpans();
    console.log(`span tree:\n${renderTree(flatten(spans, "api"))}`);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([TRACE_ID]));
    const byName = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const publishEvent = byName("publish orders");
    const publishJobs = spans.filter((s) => s.name === "publish jfast.jobs");
    expect(publishJobs).toHaveLength(2);
    const processSubscriber = byName("process order.placed->order.notify");
    const processMail = byName("process mail.send_receipt");
    const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
    const idOf = (span: ReadableSpan) => span.spanContext().spanId;

    expect(parentOf(publishEvent)).toBe(REQUEST_SPAN);
    expect(publishEvent.attributes).toMatchObject({ "messaging.message.id": event.id, "messaging.destination.name": "orders", "messaging.operation": "publish" });
    const publishSubscriberJob = publishJobs.find((s) => s.attributes["jfast.task"] === "order.placed->order.notify")!;
    const publishMailJob = publishJobs.find((s) => s.attributes["jfast.task"] === "mail.send_receipt")!;
    expect(parentOf(publishSubscriberJob)).toBe(idOf(publishEvent));
    expect(parentOf(processSubscriber)).toBe(idOf(publishSubscriberJob));
    expect(parentOf(publishMailJob)).toBe(idOf(processSubscriber));
    expect(parentOf(processMail)).toBe(idOf(publishMailJob));
    expect(processMail.attributes).toMatchObject({
      "messaging.system": "jfast",
      "messaging.operation": "process",
      "messaging.destination.name": "jfast.jobs",
      "messaging.message.id": publishMailJob.attributes["messaging.message.id"],
      "jfast.attempt": 1,
    });
    expect(processMail.kind).toBe(4); // CONSUMER
    expect(publishMailJob.kind).toBe(3); // PRODUCER
  });
});
