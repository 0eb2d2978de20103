import { describe, expect, it } from "vitest";
import type { TraceEntry, TraceView } from "./trace.js";
import { mergeTraces, traceRequestId } from "./trace-merge.js";

function entry(service: string, id: string, startedAt: string, finishedAt: string | null): TraceEntry {
  return { kind: "job", id, service, name: "t", startedAt, finishedAt, durationMs: null, outcome: "completed", parentId: null, requestId: "r1" };
}

function view(service: string, matched: TraceView["matched"], entries: TraceEntry[], notes: string[] = []): TraceView {
  return { service, id: "x", matched, requestId: matched === "request" && entries.length === 0 ? "x" : "r1", entries, complete: notes.length === 0, notes };
}

describe("mergeTraces", () => {
  it("joins the services' entries oldest first, once each, with the span and every note", () => {
    const billing = view("billing", "job", [entry("billing", "a", "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z")]);
    const shipping = view(
      "shipping",
      "request",
      [entry("shipping", "b", "2026-01-01T00:00:00.500Z", null), entry("shipping", "b", "2026-01-01T00:00:00.500Z", null), entry("shipping", "c", "2026-01-01T00:00:03.000Z", null)],
      ["queue \"default\" (redis) keeps no index by request id"],
    );
    const merged = mergeTraces([billing, shipping]);
    expect(merged.entries.map((e) => `${e.service}/${e.id}`)).toEqual(["shipping/b", "billing/a", "shipping/c"]);
    expect(merged.startedAt).toBe("2026-01-01T00:00:00.500Z");
    expect(merged.finishedAt).toBe("2026-01-01T00:00:03.000Z");
    expect(merged.complete).toBe(false);
    expect(merged.notes).toEqual(['shipping: queue "default" (redis) keeps no index by request id']);
    expect(merged.requestId).toBe("r1");
  });

  it("takes the request id from the service that found the job or flow", () => {
    expect(traceRequestId([view("a", "request", []), { ...view("b", "flow", []), requestId: "req-9" }])).toBe("req-9");
    expect(traceRequestId([view("a", "request", [])])).toBeNull();
  });
});
