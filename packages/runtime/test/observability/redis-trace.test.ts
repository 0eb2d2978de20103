import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { copyFixture, dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";

const TRACE_ID = "5bf92f3577b34da6a3ce929d0e0e4737";
const REQUEST_SPAN = "10f067aa0ba902b8";

describe("one trace through the outbox relay and the Redis queue", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it("request → publish order.placed → outbox row → relay → Redis → process subscriber → publish → process mail", async () => {
    const schema = uniqueSchema("rtrace");
    const queue = uniqueQueue("trace");
    stops.push(() => dropSchema(schema));
    stops.push(() => dropQueue(queue));
    await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".orders (id text PRIMARY KEY)`));
    const fixture = await copyFixture("traced-shop");
    stops.push(fixture.remove);
    const exporter = new InMemorySpanExporter();
    const jfast: Jfast = await createJfast({
      root: fixture.root,
      env: {},
      logger: silentLogger,
      config: {
        plugin: {
          database: { url: PG_URL, schema, pool_size: 4 },
          queue: { backend: "redis", url: REDIS_URL, name: queue, max_attempts: 2, backoff_base: 0.05, poll_interval: 2 },
        },
      },
      telemetry: { spanExporter: exporter },
    });
    stops.push(() => jfast.stop());
    await jfast.start();
    const database = jfast.require<DatabaseProvider>("database");
    const outbox = jfast.require<Outbox>("outbox");
    expect(jfast.require<QueueProvider>("queue").backend.kind).toBe("redis");
    await jfast.withRequest({ requestId: "req-9", traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () =>
      database.transaction(async (tx) => {
        await database.executorFor(tx).query(`INSERT INTO "${schema}".orders (id) VALUES ($1)`, ["o-3"]);
        await outbox.publish(tx, "orders", new Event({ type: "order.placed", data: { order_id: "o-3" }, key: "o-3" }));
      }),
    );
    jfast.createWorker({ concurrency: 2 }).start();
    await eventually("the mail job's span", async () => exporter.getFinishedSpans().some((s) => s.name === "process mail.send_receipt"));

    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([TRACE_ID]));
    const one = (name: string, task?: string): ReadableSpan => {
      const found = spans.filter((s) => s.name === name && (task === undefined || s.attributes["jfast.task"] === task));
      expect(found, `${name} ${task ?? ""}`).toHaveLength(1);
      return found[0]!;
    };
    const id = (s: ReadableSpan) => s.spanContext().spanId;
    const parent = (s: ReadableSpan) => s.parentSpanContext?.spanId;
    const publishEvent = one("publish orders");
    const publishSubscriberJob = one(`publish ${queue}`, "order.placed->order.notify");
    const processSubscriber = one("process order.placed->order.notify");
    const publishMailJob = one(`publish ${queue}`, "mail.send_receipt");
    const processMail = one("process mail.send_receipt");
    expect(parent(publishEvent)).toBe(REQUEST_SPAN);
    expect(parent(publishSubscriberJob)).toBe(id(publishEvent));
    // The job went through a jfast_outbox row and the relay before reaching Redis: its traceparent rode along.
    expect(parent(processSubscriber)).toBe(id(publishSubscriberJob));
    expect(parent(publishMailJob)).toBe(id(processSubscriber));
    expect(parent(processMail)).toBe(id(publishMailJob));
    expect(processMail.attributes["messaging.destination.name"]).toBe(queue);
  });
});
