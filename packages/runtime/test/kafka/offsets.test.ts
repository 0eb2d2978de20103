import kafkajs from "kafkajs";
import type { Admin } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.js";
import type { EventsHealth } from "../../src/kafka/events-bus.js";
import { on } from "../../src/kafka/on.js";
import { committedOffset, connectAdmin, createCleanup, eventually, requireBroker, sleep, startService, uniqueName } from "./harness.js";

const cleanup = createCleanup();
let admin: Admin;
beforeAll(async () => {
  await requireBroker();
  admin = await connectAdmin();
});
afterAll(() => admin?.disconnect());
afterEach(() => cleanup.run());

async function readiness(service: { jfast: { fetch(r: Request): Promise<Response> } }) {
  const response = await service.jfast.fetch(new Request("http://service/ready"));
  return (await response.json()) as { status: string; checks: { events: EventsHealth } };
}

describe("offsets are committed only after the handlers return", () => {
  it("does not commit while the handler runs, and commits the next offset once it returns", async () => {
    const topic = uniqueName("orders");
    const group = uniqueName("shipping");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: { partition: number; offset: string }[] = [];
    const done: string[] = [];
    cleanup.service(
      await startService({
        name: "shipping",
        group,
        handlers: [
          on(topic, async (event, { partition, offset }) => {
            started.push({ partition, offset });
            await gate;
            done.push(event.id);
          }),
        ],
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    const event = new Event({ type: "order.placed", data: {}, key: "order-1" });
    await billing.events.publish(topic, event);

    const { partition, offset } = (await eventually("the handler to start", () => (started.length ? started : null)))[0]!;
    // Give an eager auto-commit every chance to happen: the handler is still running.
    await sleep(1500);
    expect(await committedOffset(admin, group, topic, partition)).toBe("-1");

    release();
    await eventually("the offset after the message to be committed", async () =>
      (await committedOffset(admin, group, topic, partition)) === String(Number(offset) + 1),
    );
    expect(done).toEqual([event.id]);
  });
});

describe("a poison message blocks its partition", () => {
  it("never commits past a failing message, reports it, and hands it to the fixed consumer after a restart", async () => {
    const topic = uniqueName("invoices");
    const group = uniqueName("shipping");
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    const poison = new Event({ type: "invoice.paid", data: { n: 1 }, key: "invoice-9" });
    const behind = new Event({ type: "invoice.paid", data: { n: 2 }, key: "invoice-9" });

    const seenByBroken: { id: string; partition: number; offset: string }[] = [];
    const broken = await startService({
      name: "shipping",
      group,
      handlers: [
        on(topic, { name: "shipping.createShipment" }, (event, { partition, offset }) => {
          seenByBroken.push({ id: event.id, partition, offset });
          throw new Error(`no carrier for ${event.id}`);
        }),
      ],
    });
    let brokenStopped = false;
    cleanup.add(async () => {
      if (!brokenStopped) await broken.jfast.stop();
    });
    await billing.events.publish(topic, [poison, behind]);

    // The first failure and at least one retry (1 s backoff) both hit the poison message, never the one behind it.
    await eventually("two attempts at the poison message", () => seenByBroken.length >= 2, 15_000);
    const { partition, offset } = seenByBroken[0]!;
    expect(seenByBroken.every((s) => s.id === poison.id && s.offset === offset)).toBe(true);
    expect(await committedOffset(admin, group, topic, partition)).toBe("-1");

    const ready = await readiness(broken);
    expect(ready.status).toBe("degraded");
    expect(ready.checks.events.status).toBe("degraded");
    expect(ready.checks.events.blocked).toEqual([
      expect.objectContaining({
        topic,
        partition,
        offset,
        eventId: poison.id,
        eventType: "invoice.paid",
        handler: "shipping.createShipment",
        error: { class: "Error", message: `no carrier for ${poison.id}` },
      }),
    ]);
    expect(ready.checks.events.blocked[0]!.attempts).toBeGreaterThanOrEqual(2);
    const lag = ready.checks.events.lag.find((l) => l.partition === partition)!;
    expect(lag).toMatchObject({ committed: null, end: String(Number(offset) + 2), lag: 2 });
    const logged = broken.logs.find((l) => l.level === "error" && String(l.msg).includes("is blocked at offset"));
    expect(logged).toMatchObject({ topic, partition, offset, event_id: poison.id, handler: "shipping.createShipment" });

    await broken.jfast.stop();
    brokenStopped = true;
    expect(await committedOffset(admin, group, topic, partition)).toBe("-1");

    // The fixed deployment of the same service: same group, picks up at the poison message, in order.
    const handled: string[] = [];
    const fixed = cleanup.service(await startService({ name: "shipping", group, handlers: [on(topic, (event) => void handled.push(event.id))] }));
    await eventually("both messages to be handled", () => handled.length === 2);
    expect(handled).toEqual([poison.id, behind.id]);
    await eventually("the offset past both to be committed", async () =>
      (await committedOffset(admin, group, topic, partition)) === String(Number(offset) + 2),
    );
    const after = await readiness(fixed);
    expect(after.checks.events).toMatchObject({ status: "ok", blocked: [] });
  });

  it("retries only the handler that failed when a topic has several, and commits once all succeeded", async () => {
    const topic = uniqueName("invoices");
    const group = uniqueName("shipping");
    const calls: string[] = [];
    let labelFailures = 1;
    const service = cleanup.service(
      await startService({
        name: "shipping",
        group,
        handlers: [
          on(topic, { name: "shipping.reserveStock" }, () => void calls.push("reserve")),
          on(topic, { name: "shipping.printLabel" }, () => {
            calls.push("label");
            if (labelFailures-- > 0) throw new Error("printer offline");
          }),
        ],
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    await billing.events.publish(topic, new Event({ type: "invoice.paid", key: "invoice-3" }));

    await eventually("the label to print on the retry", () => calls.filter((c) => c === "label").length === 2);
    expect(calls).toEqual(["reserve", "label", "label"]);
    const lag = await eventually("the offset to be committed", async () => {
      const entry = (await readiness(service)).checks.events.lag.find((l) => l.committed !== null);
      return entry?.lag === 0 ? entry : null;
    });
    expect(lag.committed).toBe(lag.end);
  });

  it("retries in place, keeps other partitions flowing, and resumes the blocked one once the handler succeeds", async () => {
    const topic = uniqueName("orders");
    const group = uniqueName("shipping");
    let failing = true;
    const handled: { key: string; partition: number; at: number }[] = [];
    let poisonPartition = -1;
    const service = cleanup.service(
      await startService({
        name: "shipping",
        group,
        handlers: [
          on(topic, (event, { partition }) => {
            if (event.key === "order-poison" && failing) {
              poisonPartition = partition;
              throw new Error("database is read-only");
            }
            handled.push({ key: event.key!, partition, at: Date.now() });
          }),
        ],
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));
    const others = Array.from({ length: 9 }, (_, i) => `order-${i}`);

    await billing.events.publish(topic, new Event({ type: "order.placed", key: "order-poison" }));
    await eventually("the poison message to fail", () => poisonPartition >= 0);
    // Behind the poison message in its partition, and in the other partitions.
    await billing.events.publish(topic, new Event({ type: "order.shipped", key: "order-poison" }));
    await billing.events.publish(topic, others.map((key) => new Event({ type: "order.placed", key })));

    // Where the broker put each key: the producer's partitioner is murmur2(key) mod partitions, like Java's.
    const partitionOf = (key: string) =>
      kafkajs.Partitioners.DefaultPartitioner()({
        topic,
        partitionMetadata: [0, 1, 2].map((partitionId) => ({ partitionId, leader: 1, partitionErrorCode: 0, replicas: [1], isr: [1] })),
        message: { key, value: null },
      });
    expect(partitionOf("order-poison")).toBe(poisonPartition);
    const flowing = others.filter((key) => partitionOf(key) !== poisonPartition);
    const stuck = others.filter((key) => partitionOf(key) === poisonPartition);
    expect(flowing.length).toBeGreaterThan(0);

    await eventually("messages of the other partitions to be handled while one is blocked", () =>
      flowing.every((key) => handled.some((h) => h.key === key)),
    );
    // Nothing of the blocked partition went through: not the next event of the same key, nor other keys there.
    await sleep(500);
    expect(handled.filter((h) => h.partition === poisonPartition)).toEqual([]);
    expect((await readiness(service)).checks.events.status).toBe("degraded");

    failing = false; // the dependency is back
    await eventually("the blocked partition to flow again", () => handled.some((h) => h.key === "order-poison"), 40_000);
    await eventually("everything to be handled", () => handled.length === 2 + others.length);
    const poisonKeyed = handled.filter((h) => h.key === "order-poison");
    expect(poisonKeyed).toHaveLength(2);
    // Once unblocked, the partition is handled in publish order: the poison key's two events, then the rest.
    const inPartition = handled.filter((h) => h.partition === poisonPartition).map((h) => h.key);
    expect(inPartition).toEqual(["order-poison", "order-poison", ...stuck]);
    await eventually("the events check to be ok again", async () => (await readiness(service)).checks.events.status === "ok");
  });
});
