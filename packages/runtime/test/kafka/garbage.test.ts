import kafkajs, { type Admin } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import type { EventsHealth } from "../../src/kafka/events-bus.js";
import { on } from "../../src/kafka/on.js";
import { reportFigures } from "../fuzz/fuzz-settings.js";
import { BROKER, connectAdmin, createCleanup, eventually, requireBroker, startService, uniqueName } from "./harness.js";

/**
 * Messages on a topic that are not events, written by another producer: each blocks its partition with the
 * reason (docs/kafka.md#a-blocked-partition: nothing is skipped silently, an operator moves the offset past it),
 * and the other partitions keep flowing.
 */
const GARBAGE: Array<{ name: string; value: Buffer | null; reason: RegExp }> = [
  { name: "text that is not JSON", value: Buffer.from("this is not json"), reason: /not JSON/ },
  { name: "a tombstone (no value)", value: null, reason: /tombstone/ },
  { name: "a JSON array", value: Buffer.from("[1,2,3]"), reason: /not an event/ },
  { name: "an object without id and type", value: Buffer.from(JSON.stringify({ hello: "world" })), reason: /not an event/ },
  { name: "an id that is a number", value: Buffer.from(JSON.stringify({ id: 7, type: "order.placed" })), reason: /not an event/ },
  { name: "binary bytes", value: Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]), reason: /not JSON/ },
  { name: "data with a NUL", value: Buffer.from(String.raw`{"id":"e-nul","type":"order.placed","data":{"note":"a\u0000b"}}`), reason: /not a valid event: .*NUL/ },
  { name: "a type with half a surrogate pair", value: Buffer.from(String.raw`{"id":"e-half","type":"order.\ud800"}`), reason: /not a valid event/ },
  { name: "occurredAt that is not a date", value: Buffer.from(JSON.stringify({ id: "e-date", type: "order.placed", occurredAt: "yesterday" })), reason: /not a valid event/ },
];

const cleanup = createCleanup();
let admin: Admin;
beforeAll(async () => {
  await requireBroker();
  admin = await connectAdmin();
});
afterEach(() => cleanup.run());
afterAll(() => admin.disconnect());

describe("kafka: messages that are not events", () => {
  it("each blocks its partition with the reason, and the other partitions keep flowing", { timeout: 90_000 }, async () => {
    const topics = GARBAGE.map(() => uniqueName("garbage"));
    await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 2 })), waitForLeaders: true });
    cleanup.add(() => admin.deleteTopics({ topics }));
    const handled: Array<{ topic: string; partition: number; id: string }> = [];
    const service = cleanup.service(
      await startService({
        name: "shipping",
        group: uniqueName("shipping"),
        handlers: topics.map((topic) => on(topic, { name: `shipping.${topic}` }, (event, { partition }) => void handled.push({ topic, partition, id: event.id }))),
      }),
    );
    const producer = new kafkajs.Kafka({ clientId: "garbage-producer", brokers: [BROKER], logLevel: kafkajs.logLevel.NOTHING }).producer();
    await producer.connect();
    cleanup.add(() => producer.disconnect());
    const canaries = topics.map((topic) => ({ topic, event: new Event({ type: "order.placed", data: { canary: topic }, key: "canary" }) }));
    for (const [i, g] of GARBAGE.entries()) {
      await producer.send({ topic: topics[i]!, messages: [{ partition: 0, value: g.value }] });
      // Behind the garbage in its partition, and in the other partition.
      await producer.send({ topic: topics[i]!, messages: [{ partition: 0, value: JSON.stringify(new Event({ type: "order.placed" }).toJSON()) }] });
      await producer.send({ topic: topics[i]!, messages: [{ partition: 1, value: JSON.stringify(canaries[i]!.event.toJSON()) }] });
    }

    await eventually("the canary of every topic's other partition to be handled", () =>
      canaries.every((c) => handled.some((h) => h.topic === c.topic && h.id === c.event.id)),
    40_000);
    const health = await eventually("every garbage message to block its partition", async () => {
      const response = await service.jfast.fetch(new Request("http://service/ready"));
      const events = ((await response.json()) as { checks: { events: EventsHealth } }).checks.events;
      return topics.every((topic) => events.blocked.some((b) => b.topic === topic && b.partition === 0)) ? events : null;
    }, 40_000).catch(async (error: Error) => {
      const response = await service.jfast.fetch(new Request("http://service/ready"));
      const events = ((await response.json()) as { checks: { events: EventsHealth } }).checks.events;
      const missing = GARBAGE.filter((_, i) => !events.blocked.some((b) => b.topic === topics[i] && b.partition === 0)).map((g) => g.name);
      const ran = handled.filter((h) => h.partition === 0).map((h) => GARBAGE[topics.indexOf(h.topic)]!.name);
      throw new Error(`${error.message}: not blocked: ${missing.join(", ")}; handled in partition 0: ${ran.join(", ")}`);
    });
    expect(health.status).toBe("degraded");
    for (const [i, g] of GARBAGE.entries()) {
      const entry = health.blocked.find((b) => b.topic === topics[i] && b.partition === 0)!;
      expect(entry.offset, g.name).toBe("0");
      expect(entry.error.class, g.name).toBe("UnreadableEventError");
      expect(entry.error.message, g.name).toMatch(g.reason);
    }
    // Nothing behind the garbage in its partition went through.
    expect(handled.filter((h) => h.partition === 0)).toEqual([]);
    reportFigures({ kind: "garbage", suite: "kafka messages", inputs: GARBAGE.length, completed: 0, quarantined: GARBAGE.length, lost: 0 });
  });
});
