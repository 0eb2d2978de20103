import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { currentContext } from "../../src/context/context.js";
import { Event } from "../../src/core/event.js";
import { on } from "../../src/kafka/on.js";
import { createCleanup, eventually, requireBroker, startService, uniqueName } from "./harness.js";

declare module "../../src/core/providers.js" {
  interface Providers {
    /** The shipping service's log in the round trip below. */
    log: { info(message: string): void };
  }
}

const cleanup = createCleanup();
beforeAll(requireBroker);
afterEach(() => cleanup.run());

describe("events between services over a real Kafka broker", () => {
  it("delivers a published event to the on() handlers of every other service (one consumer group each)", async () => {
    const topic = uniqueName("invoices");
    const shipped: Event[] = [];
    const audited: Event[] = [];
    cleanup.service(await startService({ name: "shipping", group: uniqueName("shipping"), handlers: [on(topic, (e) => void shipped.push(e))] }));
    cleanup.service(await startService({ name: "audit", group: uniqueName("audit"), handlers: [on(topic, (e) => void audited.push(e))] }));
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));

    const paid = new Event({ type: "invoice.paid", data: { invoice: 7, amount: "42.00" }, key: "invoice-7" });
    await billing.events.publish(topic, paid);

    await eventually("both services to receive the event", () => shipped.length === 1 && audited.length === 1);
    for (const received of [shipped[0]!, audited[0]!]) {
      expect(received).toBeInstanceOf(Event);
      expect(received.toJSON()).toEqual(paid.toJSON());
    }
  });

  it("keeps each key's events in publish order, with keys spread over several partitions", async () => {
    const topic = uniqueName("orders");
    const seen: { key: string; seq: number; partition: number }[] = [];
    cleanup.service(
      await startService({
        name: "shipping",
        group: uniqueName("shipping"),
        handlers: [on(topic, (e, { partition }) => void seen.push({ key: e.key!, seq: (e.data as { seq: number }).seq, partition }))],
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));

    const keys = Array.from({ length: 12 }, (_, i) => `order-${i}`);
    const perKey = 25;
    // Interleaved across keys, in several sends, the way a busy service publishes.
    for (let seq = 0; seq < perKey; seq++) {
      await billing.events.publish(
        topic,
        keys.map((key) => new Event({ type: "order.updated", data: { seq }, key })),
      );
    }

    await eventually("every event to arrive", () => seen.length === keys.length * perKey);
    const partitionsUsed = new Set(seen.map((s) => s.partition));
    expect(partitionsUsed.size).toBeGreaterThan(1);
    for (const key of keys) {
      const mine = seen.filter((s) => s.key === key);
      expect(new Set(mine.map((s) => s.partition)).size).toBe(1);
      expect(mine.map((s) => s.seq)).toEqual(Array.from({ length: perKey }, (_, i) => i));
    }
  });

  it("runs handlers with the publishing request's tenant, request id and trace restored", async () => {
    const topic = uniqueName("receipts");
    const contexts: unknown[] = [];
    const shippingLog: string[] = [];
    cleanup.service(
      await startService({
        name: "shipping",
        group: uniqueName("shipping"),
        handlers: [
          on(topic, (event, { ctx }) => {
            const c = currentContext();
            contexts.push({ tenantId: c?.tenantId, requestId: c?.requestId, traceparent: c?.traceparent, tracestate: c?.tracestate });
            ctx.require("log").info(`handled ${event.type}`);
          }),
        ],
        providers: { log: { info: (m: string) => shippingLog.push(m) } },
      }),
    );
    const billing = cleanup.service(await startService({ name: "billing", group: uniqueName("billing") }));

    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await billing.jfast.withRequest({ tenantId: "acme", requestId: "req-42", traceparent, tracestate: "vendor=1" }, () =>
      billing.events.publish(topic, new Event({ type: "receipt.registered", data: { id: 1 }, key: "receipt-1" })),
    );
    // Published outside any request: nothing to restore, and nothing leaks from the previous message.
    await billing.events.publish(topic, new Event({ type: "receipt.registered", data: { id: 2 }, key: "receipt-1" }));

    await eventually("both events to be handled", () => contexts.length === 2);
    expect(contexts[0]).toEqual({ tenantId: "acme", requestId: "req-42", traceparent, tracestate: "vendor=1" });
    expect(contexts[1]).toEqual({ tenantId: null, requestId: null, traceparent: null, tracestate: null });
    // Handlers reach the app's providers through ctx, as routes and tasks do.
    expect(shippingLog).toEqual(["handled receipt.registered", "handled receipt.registered"]);
  });
});
