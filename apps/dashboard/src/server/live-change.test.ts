import type { EventsView, OverviewView } from "@jfast/runtime/admin";
import { describe, expect, it } from "vitest";
import { fingerprintOf, type LiveMessage } from "./live-change";

function overview(patch: { dead?: number; latencyMs?: number; status?: "ok" | "degraded" } = {}): OverviewView {
  return {
    service: "billing",
    environment: "development",
    plugins: ["database", "queue"],
    you: { name: "ops", role: "operator" },
    readiness: { status: patch.status ?? "ok", checks: { queue: { status: patch.status ?? "ok", latencyMs: patch.latencyMs ?? 3 } } },
    queue: { enabled: true, backend: "postgres", name: "default", depths: { ready: 1, scheduled: 0, running: 0, dead: patch.dead ?? 0 }, error: null },
    tasks: [{ name: "billing.charge", module: "billing", maxAttempts: null }],
    auditStore: "sql",
  };
}

function message(data: OverviewView | null, error: string | null = null, at = "2026-01-01T00:00:00.000Z"): LiveMessage {
  return { service: "billing", at, overview: data, outbox: null, events: null, error };
}

describe("what the live stream counts as a change", () => {
  it("ignores when it was read and how long the checks took", () => {
    expect(fingerprintOf(message(overview({ latencyMs: 2 }), null, "2026-01-01T00:00:00.000Z"))).toBe(
      fingerprintOf(message(overview({ latencyMs: 40 }), null, "2026-01-01T00:00:02.000Z")),
    );
  });

  it("sees a new dead letter, a health change and an outage", () => {
    const before = fingerprintOf(message(overview()));
    expect(fingerprintOf(message(overview({ dead: 1 })))).not.toBe(before);
    expect(fingerprintOf(message(overview({ status: "degraded" })))).not.toBe(before);
    expect(fingerprintOf(message(null, "billing is unreachable"))).not.toBe(before);
  });

  it("sees Kafka lag move and a partition block, not a fresh read of the same offsets", () => {
    const events = (end: string, blocked: boolean, readAt: string): EventsView => ({
      enabled: true,
      reported: true,
      group: "shipping",
      error: null,
      turnedOff: false,
      offsetsReadAt: readAt,
      partitions: [{ topic: "parcels", partition: 0, committedOffset: "4", endOffset: end, lag: Number(end) - 4, blocked: blocked ? { offset: "4", error: "no carrier", since: readAt, attempts: 1, eventId: "e1", eventType: "parcel.sent", handler: "shipping.route", nextRetryAt: readAt } : null }],
    });
    const withEvents = (e: EventsView) => ({ ...message(overview()), events: e });
    const before = fingerprintOf(withEvents(events("5", false, "2026-01-01T00:00:00.000Z")));
    expect(fingerprintOf(withEvents(events("5", false, "2026-01-01T00:00:02.000Z")))).toBe(before);
    expect(fingerprintOf(withEvents(events("6", false, "2026-01-01T00:00:02.000Z")))).not.toBe(before);
    expect(fingerprintOf(withEvents(events("5", true, "2026-01-01T00:00:02.000Z")))).not.toBe(before);
  });
});
