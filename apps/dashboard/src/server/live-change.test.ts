import type { EventsView, OverviewView } from "@jfast/runtime/admin";
import { describe, expect, it } from "vitest";
import { LIVE_PARTS, changedParts, isStale, partPrints, rereadDelay, type LiveMessage } from "./live-change";

const fingerprintOf = (m: LiveMessage) => JSON.stringify(partPrints(m));

function overview(patch: { dead?: number; ready?: number; running?: number; newestDead?: { id: string; diedAt: string } | null; latencyMs?: number; status?: "ok" | "degraded" } = {}): OverviewView {
  return {
    service: "billing",
    environment: "development",
    plugins: ["database", "queue"],
    you: { name: "ops", role: "operator" },
    readiness: { status: patch.status ?? "ok", checks: { queue: { status: patch.status ?? "ok", latencyMs: patch.latencyMs ?? 3 } } },
    queue: {
      enabled: true,
      backend: "postgres",
      name: "default",
      depths: { ready: patch.ready ?? 1, scheduled: 0, running: patch.running ?? 0, dead: patch.dead ?? 0 },
      newestDead: patch.newestDead ?? null,
      error: null,
    },
    tasks: [{ name: "billing.charge", module: "billing", maxAttempts: null }],
    auditStore: "sql",
  };
}

function message(data: OverviewView | null, error: string | null = null, at = "2026-01-01T00:00:00.000Z"): LiveMessage {
  return { service: "billing", at, overview: data, outbox: null, events: null, error, changed: [] };
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

describe("which part of a service changed", () => {
  const prints = (o: OverviewView | null, error: string | null = null) => partPrints(message(o, error));

  it("says only depths when jobs flow, so dead letters are not re-read", () => {
    const changed = changedParts(prints(overview({ ready: 5, running: 2 })), prints(overview({ ready: 9, running: 1 })));
    expect(changed).toEqual(["depths"]);
    expect(isStale("deadLetters.list", changed, false)).toBe(false);
    expect(isStale("deadLetters.groups", changed, false)).toBe(false);
    expect(isStale("jobs.list", changed, false)).toBe(true);
    expect(isStale("queues.list", changed, false)).toBe(true);
  });

  it("says deadLetters when one dies, and when one is retried as another dies (same count, newer death)", () => {
    const first = { id: "a", diedAt: "2026-01-01T00:00:00.000Z" };
    const before = prints(overview({ dead: 1, newestDead: first }));
    expect(changedParts(before, prints(overview({ dead: 2, newestDead: { id: "b", diedAt: "2026-01-01T00:00:01.000Z" } })))).toEqual(["deadLetters"]);
    const swapped = changedParts(before, prints(overview({ dead: 1, newestDead: { id: "c", diedAt: "2026-01-01T00:00:02.000Z" } })));
    expect(swapped).toEqual(["deadLetters"]);
    expect(isStale("deadLetters.list", swapped, false)).toBe(true);
    expect(isStale("deadLetters.replays", swapped, false)).toBe(true);
    expect(changedParts(before, prints(overview({ dead: 1, newestDead: first })))).toEqual([]);
  });

  it("marks every part changed on the first push, and everything stale on an outage", () => {
    expect(changedParts(undefined, prints(overview()))).toEqual([...LIVE_PARTS]);
    const down = changedParts(prints(overview()), prints(null, "billing is unreachable"));
    expect(down).toContain("health");
    expect(isStale("deadLetters.list", [], true)).toBe(true);
  });

  it("never re-reads what came with the push or must not move under the user's eyes; re-reads unknown views on any change", () => {
    for (const procedure of ["overview.get", "outbox.status", "events.status", "contracts.graph", "deadLetters.preview", "jobs.bulkPreview"]) {
      expect(isStale(procedure, [...LIVE_PARTS], false), procedure).toBe(false);
    }
    expect(isStale("something.new", ["outbox"], false)).toBe(true);
    expect(isStale("something.new", [], false)).toBe(false);
    expect(isStale("outbox.dead", ["depths"], false)).toBe(false);
    expect(isStale("outbox.dead", ["outbox"], false)).toBe(true);
  });
});

describe("how often a costly view is re-read", () => {
  it("re-reads dead letters at once after a quiet spell, and at most every 10 s while they keep changing", () => {
    const now = 1_000_000;
    expect(rereadDelay("deadLetters.list", now - 60_000, now)).toBe(0);
    expect(rereadDelay("deadLetters.list", now - 2_000, now)).toBe(8_000);
    expect(rereadDelay("deadLetters.groups", now - 9_000, now)).toBe(1_000);
    expect(rereadDelay("jobs.list", now - 100, now)).toBe(0);
  });
});
