import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { currentContext } from "../../src/context/context.js";
import { Event } from "../../src/core/event.js";
import { createJfast } from "../../src/create-jfast.js";
import { on } from "../../src/kafka/on.js";
import { BROKER, createCleanup, eventually, requireBroker, startService, uniqueName } from "../kafka/harness.js";
import { silentLogger } from "../postgres/pg-test-env.js";

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
      `[service]\nname = "shipping"\n\n[plugins]\nenabled = ["events", "telemetry"]\n\n[plugin.events]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n`,
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
});
