import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { copyFixture, dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const REQUEST_SPAN = "00f067aa0ba902b7";

/** The span tree as indented text: `name [kind] attributes`, children under their parent. */
export function renderTree(spans: ReadableSpan[]): string {
  const children = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId ?? "";
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const roots = spans.filter((s) => !s.parentSpanContext || !ids.has(s.parentSpanContext.spanId));
  const lines: string[] = [];
  const kinds = ["internal", "server", "client", "producer", "consumer"];
  const walk = (span: ReadableSpan, depth: number) => {
    const a = span.attributes;
    lines.push(
      `${"  ".repeat(depth)}${span.name} [${kinds[span.kind]}] trace=${span.spanContext().traceId} span=${span.spanContext().spanId}` +
        ` parent=${span.parentSpanContext?.spanId ?? "-"} ${a["messaging.operation"]} dest=${a["messaging.destination.name"]} id=${a["messaging.message.id"]}`,
    );
    for (const child of children.get(span.spanContext().spanId) ?? []) walk(child, depth + 1);
  };
  for (const root of roots) walk(root, 0);
  return lines.join("\n");
}

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
    const tree = renderTree(spans);
    console.log(`span tree:\n${tree}`);
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

  it("across processes: the API process publishes, a separate worker process runs both jobs, one trace", async () => {
    const schema = uniqueSchema("trace");
    stops.push(() => dropSchema(schema));
    await withAdmin((c) => c.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".orders (id text PRIMARY KEY)`));
    const fixture = await copyFixture("traced-shop");
    stops.push(fixture.remove);
    const exporter = new InMemorySpanExporter();
    const api: Jfast = await createJfast({
      root: fixture.root,
      env: {},
      logger: silentLogger,
      config: { plugin: { database: { url: PG_URL, schema, pool_size: 2 } } },
      telemetry: { spanExporter: exporter },
    });
    stops.push(() => api.stop());
    await api.start();
    const database = api.require<DatabaseProvider>("database");
    const outbox = api.require<Outbox>("outbox");
    await api.withRequest({ requestId: "req-8", traceparent: `00-${TRACE_ID}-${REQUEST_SPAN}-01` }, () =>
      database.transaction(async (tx) => {
        await database.executorFor(tx).query(`INSERT INTO "${schema}".orders (id) VALUES ($1)`, ["o-2"]);
        await outbox.publish(tx, "orders", new Event({ type: "order.placed", data: { order_id: "o-2" }, key: "o-2" }));
      }),
    );

    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./fixtures/traced-worker.ts", import.meta.url))], {
      env: { ...process.env, JFAST_TEST_WORKER: JSON.stringify({ root: fixture.root, url: PG_URL, schema }) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    stops.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    });
    const remote: Array<{ name: string; kind: number; traceId: string; spanId: string; parentSpanId: string | null; attributes: Record<string, unknown> }> = [];
    createInterface({ input: child.stdout! }).on("line", (line) => remote.push(JSON.parse(line)));
    await eventually(`the worker process to run the mail job (stderr: ${stderr})`, async () => remote.some((s) => s.name === "process mail.send_receipt"), 60_000);

    const local = exporter.getFinishedSpans().map((s) => ({ name: s.name, kind: s.kind, traceId: s.spanContext().traceId, spanId: s.spanContext().spanId, parentSpanId: s.parentSpanContext?.spanId ?? null, attributes: s.attributes }));
    expect(local.map((s) => s.name).sort()).toEqual(["publish jfast.jobs", "publish orders"]);
    expect(remote.map((s) => s.name).sort()).toEqual(["process mail.send_receipt", "process order.placed->order.notify", "publish jfast.jobs"]);
    const all = [...local, ...remote];
    expect(new Set(all.map((s) => s.traceId))).toEqual(new Set([TRACE_ID]));
    const one = (name: string, where: typeof all) => where.find((s) => s.name === name)!;
    const publishEvent = one("publish orders", local);
    const publishSubscriberJob = one("publish jfast.jobs", local);
    const processSubscriber = one("process order.placed->order.notify", remote);
    const publishMailJob = one("publish jfast.jobs", remote);
    const processMail = one("process mail.send_receipt", remote);
    expect(publishEvent.parentSpanId).toBe(REQUEST_SPAN);
    expect(publishSubscriberJob.parentSpanId).toBe(publishEvent.spanId);
    // The hop between processes: the job row carried the publish span's traceparent.
    expect(processSubscriber.parentSpanId).toBe(publishSubscriberJob.spanId);
    expect(publishMailJob.parentSpanId).toBe(processSubscriber.spanId);
    expect(processMail.parentSpanId).toBe(publishMailJob.spanId);
    console.log(
      "cross-process span tree:\n" +
        [
          `[api]    ${publishEvent.name} span=${publishEvent.spanId} parent=${publishEvent.parentSpanId}`,
          `[api]      ${publishSubscriberJob.name} span=${publishSubscriberJob.spanId} parent=${publishSubscriberJob.parentSpanId}`,
          `[worker]     ${processSubscriber.name} span=${processSubscriber.spanId} parent=${processSubscriber.parentSpanId}`,
          `[worker]       ${publishMailJob.name} span=${publishMailJob.spanId} parent=${publishMailJob.parentSpanId}`,
          `[worker]         ${processMail.name} span=${processMail.spanId} parent=${processMail.parentSpanId}`,
        ].join("\n"),
    );
  }, 90_000);
});
