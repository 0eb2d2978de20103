import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Admin } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EventsView } from "../../src/admin/routers/events.js";
import { Event } from "../../src/core/event.js";
import { createJfast } from "../../src/create-jfast.js";
import { createLogger } from "../../src/observability/logger.js";
import { on } from "../../src/kafka/on.js";
import { committedOffset, connectAdmin, createCleanup, eventually, requireBroker, startService, uniqueName, type TestService } from "./harness.js";

const VIEWER = "viewer-token-status-01-0123456789";
const env = { JFAST_ADMIN_TOKENS: `viewer:${VIEWER}` };

const cleanup = createCleanup();
let admin: Admin;
beforeAll(async () => {
  await requireBroker();
  admin = await connectAdmin();
});
afterAll(() => admin?.disconnect());
afterEach(() => cleanup.run());

async function status(service: TestService): Promise<EventsView> {
  const response = await service.jfast.fetch(new Request("http://service/jfast/admin/events.status", { headers: { authorization: `Bearer ${VIEWER}` } }));
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: { data: EventsView } }).result.data;
}

async function metrics(service: TestService): Promise<string> {
  return (await service.jfast.fetch(new Request("http://service/metrics"))).text();
}

describe("events.status: lag and blocked partitions from the broker", () => {
  it("shows a poison message as blocked with its offset, error and lag, and lag 0 once the handler is fixed", async () => {
    const topic = uniqueName("invoices");
    const group = uniqueName("shipping");
    let broken = true;
    const handled: string[] = [];
    const shipping = cleanup.service(
      await startService({
        name: "shipping",
        group,
        env,
        handlers: [
          on(topic, { name: "shipment.createShipment" }, (event) => {
            if (broken && event.key === "invoice-poison") throw new Error(`no carrier for ${event.id}`);
            handled.push(event.id);
          }),
        ],
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing"), env }));

    const poison = new Event({ type: "invoice.paid", data: {}, key: "invoice-poison" });
    const behind = new Event({ type: "invoice.paid", data: {}, key: "invoice-poison" });
    await billing.events.publish(topic, [poison, behind]);

    const blocked = await eventually("the poison message to show as blocked", async () => {
      const view = await status(shipping);
      return view.partitions.find((p) => p.blocked !== null && p.lag === 2);
    });
    const view = await status(shipping);
    expect(view).toMatchObject({ enabled: true, reported: true, group, error: null, turnedOff: false });
    expect(view.offsetsReadAt).not.toBeNull();
    // Every partition of the topic is listed, each with the broker's offsets; only the poison one is blocked.
    expect(view.partitions.filter((p) => p.topic === topic).length).toBeGreaterThanOrEqual(1);
    expect(view.partitions.filter((p) => p.blocked !== null)).toHaveLength(1);
    const offset = blocked.blocked!.offset;
    expect(blocked).toMatchObject({
      topic,
      committedOffset: null,
      endOffset: String(BigInt(offset) + 2n),
      lag: 2,
      blocked: { offset, error: `Error: no carrier for ${poison.id}`, eventId: poison.id, eventType: "invoice.paid", handler: "shipment.createShipment" },
    });
    expect(blocked.blocked!.attempts).toBeGreaterThanOrEqual(1);
    expect(Date.parse(blocked.blocked!.since)).not.toBeNaN();
    expect(await committedOffset(admin, group, topic, blocked.partition)).toBe("-1");

    // The same lag on /metrics, labelled with the group.
    const text = await metrics(shipping);
    expect(text).toContain(`jfast_kafka_consumer_lag{topic="${topic}",partition="${blocked.partition}",group="${group}",service="shipping"} 2`);

    // Read within two seconds of each other: the second answer reuses the first read of the offsets.
    const [first, second] = [await status(shipping), await status(shipping)];
    expect(second.offsetsReadAt).toBe(first.offsetsReadAt);

    // The dependency comes back: the next retry goes through, and the one behind it follows in order.
    broken = false;
    await eventually("both messages to be handled", () => handled.length === 2, 40_000);
    expect(handled).toEqual([poison.id, behind.id]);
    const after = await eventually("lag to return to 0", async () => {
      const partition = (await status(shipping)).partitions.find((p) => p.topic === topic && p.partition === blocked.partition);
      return partition && partition.lag === 0 ? partition : null;
    });
    expect(after).toMatchObject({ committedOffset: String(BigInt(offset) + 2n), endOffset: String(BigInt(offset) + 2n), blocked: null });
    expect(await metrics(shipping)).toContain(`jfast_kafka_consumer_lag{topic="${topic}",partition="${blocked.partition}",group="${group}",service="shipping"} 0`);
  });

  it("reports no group and no partitions for a service that only publishes", async () => {
    const publisher = cleanup.service(await startService({ name: "billing", group: uniqueName("billing"), env }));
    expect(await status(publisher)).toMatchObject({ enabled: true, reported: true, group: null, error: null, partitions: [] });
  });
});

describe("topic prefix", () => {
  it("publishes to and consumes <prefix><topic>, in the group <prefix><group>", async () => {
    const prefix = `${uniqueName("e2e")}.`;
    const group = uniqueName("shipping");
    const seen: { id: string; topic: string }[] = [];
    const shipping = cleanup.service(
      await startService({
        name: "shipping",
        group,
        env: { ...env, KAFKA_TOPIC_PREFIX: prefix },
        handlers: [on("invoices", (event, { topic }) => void seen.push({ id: event.id, topic }))],
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing"), env: { KAFKA_TOPIC_PREFIX: prefix } }));
    const event = new Event({ type: "invoice.paid", data: {}, key: "invoice-1" });
    await billing.events.publish("invoices", event);
    await eventually("the prefixed event to arrive", () => seen.length === 1);
    expect(seen).toEqual([{ id: event.id, topic: `${prefix}invoices` }]);
    expect(shipping.events.consumerGroup).toBe(`${prefix}${group}`);
    expect((await admin.listTopics()).filter((t) => t.startsWith(prefix))).toEqual([`${prefix}invoices`]);
    const view = await eventually("the group to commit", async () => {
      const current = await status(shipping);
      return current.partitions.some((p) => p.committedOffset !== null && p.lag === 0) ? current : null;
    });
    expect(view.group).toBe(`${prefix}${group}`);
    expect(new Set(view.partitions.map((p) => p.topic))).toEqual(new Set([`${prefix}invoices`]));
  });
});

describe("JFAST_DISABLE_PLUGINS=kafka", () => {
  it("starts a service with on(...) handlers without Kafka, says so in the log, and events.status shows it turned off", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-kafka-off-"));
    cleanup.add(() => rm(root, { recursive: true, force: true }));
    // A broker address nothing listens on: nothing may try to reach it.
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "shipping"\n\n[plugins]\nenabled = ["kafka"]\n\n[plugin.kafka]\nbootstrap_servers = "127.0.0.1:1"\n`);
    const logs: Record<string, unknown>[] = [];
    const jfast = await createJfast({
      root,
      env: { ...env, JFAST_DISABLE_PLUGINS: "kafka" },
      logger: createLogger({ service: "shipping", level: "debug", write: (line) => logs.push(JSON.parse(line)) }),
      handlers: [on("invoices", () => undefined)],
    });
    await jfast.start();
    cleanup.add(() => jfast.stop());
    expect(logs).toContainEqual(expect.objectContaining({ level: "warn", msg: expect.stringContaining("the kafka plugin is off (JFAST_DISABLE_PLUGINS)"), topics: ["invoices"] }));
    expect(() => jfast.require("events")).toThrow(/not enabled/);
    const ready = (await (await jfast.fetch(new Request("http://service/ready"))).json()) as { status: string; checks: Record<string, unknown> };
    expect(ready.status).toBe("ok");
    expect(ready.checks.events).toBeUndefined();
    const response = await jfast.fetch(new Request("http://service/jfast/admin/events.status", { headers: { authorization: `Bearer ${VIEWER}` } }));
    expect(((await response.json()) as { result: { data: EventsView } }).result.data).toEqual({
      enabled: false,
      reported: false,
      group: null,
      error: null,
      turnedOff: true,
      offsetsReadAt: null,
      partitions: [],
    });
  });
});
