import { describe, expect, it } from "vitest";
import { withRequest } from "../context/context.js";
import { Event } from "../core/event.js";
import { decodeEvent, encodeEvent, HEADER, UnreadableEventError } from "./wire.js";

describe("events on the wire", () => {
  it("round-trips an event with its request context, and repeats the context as headers", () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const event = withRequest({ tenantId: "acme", requestId: "req-1", traceparent }, () =>
      new Event({ type: "order.paid", data: { amount: "42.00" }, key: 7 }),
    );
    const message = encodeEvent(event, "billing");
    expect(message.key).toBe("7");
    expect(message.headers).toMatchObject({
      [HEADER.eventId]: event.id,
      [HEADER.eventType]: "order.paid",
      [HEADER.service]: "billing",
      [HEADER.tenantId]: "acme",
      [HEADER.requestId]: "req-1",
      [HEADER.traceparent]: traceparent,
    });
    const decoded = decodeEvent(Buffer.from(message.value));
    expect(decoded.toJSON()).toEqual(event.toJSON());
  });

  it("reports a message that is not an event as unreadable, with the docs that say how to move past it", () => {
    for (const value of [null, Buffer.from("{oops"), Buffer.from(JSON.stringify({ hello: 1 })), Buffer.from(JSON.stringify({ id: "1", type: "Bad Type" }))]) {
      const error = (() => {
        try {
          decodeEvent(value);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(UnreadableEventError);
      expect((error as UnreadableEventError).code).toBe("EVENT_UNREADABLE");
    }
  });
});
