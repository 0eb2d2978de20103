import { describe, expect, it } from "vitest";
import { Event } from "../core/event.js";
import { TaskRegistry } from "../core/registry.js";
import { defineTask } from "../core/define-task.js";
import { defineSubscriber, nameSubscribers, subscribersOf } from "./subscribe.js";
import { subscriberJobId, subscriberJobs } from "./subscriber-jobs.js";

describe("subscribe", () => {
  it("is named after its export in its module, or after the name option", () => {
    const byExport = defineSubscriber("receipt.registered", async () => {});
    const pinned = defineSubscriber("receipt.registered", { name: "keepThis" }, async () => {});
    const hidden = defineSubscriber("receipt.registered", async () => {});
    nameSubscribers({ module: "alert", file: "tasks.ts", definitions: [byExport, pinned], exports: { checkBudget: byExport, renamed: pinned } });
    expect(byExport.name).toBe("receipt.registered->alert.checkBudget");
    expect(pinned.name).toBe("receipt.registered->alert.keepThis");
    expect(() => nameSubscribers({ module: "alert", file: "tasks.ts", definitions: [hidden], exports: {} })).toThrow(
      expect.objectContaining({ code: "SUBSCRIBER_UNNAMED", message: expect.stringContaining("is not exported") }),
    );
    expect(() =>
      nameSubscribers({ module: "alert", file: "tasks.ts", definitions: [hidden], exports: { a: hidden, b: hidden } }),
    ).toThrow(expect.objectContaining({ code: "SUBSCRIBER_UNNAMED", message: expect.stringContaining("exported as a and b") }));
  });

  it("outside modules/ it needs a <module>.<function> name, else registration refuses it", () => {
    const registry = new TaskRegistry();
    registry.register(defineSubscriber("receipt.registered", { name: "alert.check" }, async () => {}));
    expect(registry.names()).toEqual(["receipt.registered->alert.check"]);
    expect(() => registry.register(defineSubscriber("receipt.registered", async () => {}))).toThrow(
      expect.objectContaining({ code: "SUBSCRIBER_UNNAMED" }),
    );
  });

  it("rejects a malformed type, name or handler where it is declared", () => {
    expect(() => defineSubscriber("ReceiptRegistered", async () => {})).toThrow(/event type such as "receipt.registered"/);
    expect(() => defineSubscriber("receipt.registered", { name: "not valid!" }, async () => {})).toThrow(/name is the function part/);
    expect(() => defineSubscriber("receipt.registered", {} as never)).toThrow(/needs a handler/);
  });

  it("with a session, claims the event id in the inbox (idempotentOn) under its own name", () => {
    const withSession = defineSubscriber("receipt.registered", { session: true, name: "a.b" }, async () => {});
    const without = defineSubscriber("receipt.registered", { name: "a.c" }, async () => {});
    expect(withSession.options.session).toBe(true);
    expect(withSession.options.idempotentOn?.(new Event({ type: "receipt.registered", id: "evt-1" }).toJSON())).toBe("evt-1");
    expect(without.options.session).toBeUndefined();
    expect(without.options.idempotentOn).toBeUndefined();
  });

  it("hands the handler the reconstructed Event", async () => {
    let received: unknown = null;
    const definition = defineSubscriber("receipt.registered", { name: "a.b" }, async (event) => {
      received = event;
    });
    const event = new Event({ type: "receipt.registered", data: { id: 7 }, tenantId: "acme" });
    await definition.handler(event.toJSON(), {} as never);
    expect(received).toBeInstanceOf(Event);
    expect((received as Event).toJSON()).toEqual(event.toJSON());
  });
});

describe("subscriber jobs", () => {
  it("match subscribers by type only, one job each, with a deterministic UUID per event and subscriber", () => {
    const a = defineSubscriber("receipt.registered", { name: "alert.check" }, async () => {});
    const b = defineSubscriber("receipt.registered", { name: "ledger.book" }, async () => {});
    const other = defineSubscriber("receipt.cancelled", { name: "alert.undo" }, async () => {});
    const plain = defineTask("receipt.registered", async () => {});
    const subscribers = subscribersOf([b, other, plain, a], "receipt.registered");
    expect(subscribers.map((s) => s.name)).toEqual(["receipt.registered->alert.check", "receipt.registered->ledger.book"]);

    const event = new Event({ type: "receipt.registered", tenantId: "acme", requestId: "req-1", trace: { traceparent: "00-a-b-01" } });
    const jobs = subscriberJobs(event, subscribers);
    expect(jobs.map((j) => [j.task, j.tenantId, j.requestId, j.trace])).toEqual([
      ["receipt.registered->alert.check", "acme", "req-1", { traceparent: "00-a-b-01" }],
      ["receipt.registered->ledger.book", "acme", "req-1", { traceparent: "00-a-b-01" }],
    ]);
    expect(jobs[0]!.payload).toEqual(event.toJSON());
    expect(subscriberJobs(event, subscribers).map((j) => j.id)).toEqual(jobs.map((j) => j.id));
    expect(jobs[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jobs[0]!.id).not.toBe(jobs[1]!.id);
    expect(subscriberJobId("evt-2", "receipt.registered->alert.check")).not.toBe(subscriberJobId("evt-1", "receipt.registered->alert.check"));
  });
});
