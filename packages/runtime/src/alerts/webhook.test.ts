import { describe, expect, it } from "vitest";
import { alertDetail, alertText, type AlertPayload } from "./webhook.js";

const base: Omit<AlertPayload, "text"> = {
  alert: "invoices ship",
  rule: "promise",
  state: "firing",
  value: 2,
  threshold: 1,
  window: "10m",
  task: null,
  queue: null,
  service: "billing",
  environment: "production",
  at: "2026-12-06T10:00:00.000Z",
};

describe("alertDetail: what the history keeps of a notification", () => {
  it("names a broken promise's request and hop, as the webhook's text does", () => {
    const p = {
      ...base,
      promise: {
        when: "invoice.paid",
        then: "shipment.created",
        within: "5m",
        broken: 2,
        example: { requestId: "r-123", eventId: "e-1", publishedAt: "", dueAt: "", hop: "subscriber_job" as const, service: "shipping", detail: "shipping's job shipment.create is waiting to retry after 2 failures" },
      },
    };
    expect(alertDetail(p)).toBe("request r-123: late at subscriber_job — shipping's job shipment.create is waiting to retry after 2 failures");
    expect(alertText(p)).toContain("shipping's job shipment.create is waiting to retry after 2 failures");
  });

  it("names a kafka_lag rule's worst group, topic and partition", () => {
    const p = { ...base, rule: "kafka_lag" as const, value: 150, threshold: 100, topic: null, kafka: { group: "billing", topic: "orders", lag: 150, partition: 2, partitionLag: 90 } };
    expect(alertDetail(p)).toBe("group billing, topic orders 150 behind, partition 2 90 behind");
  });

  it("is null for a recovery and for rules that name nothing", () => {
    expect(alertDetail({ ...base, rule: "dead_letters" })).toBeNull();
    expect(alertDetail({ ...base, state: "resolved", promise: { when: "a", then: "b", within: "1m", broken: 0, example: null } })).toBeNull();
  });
});
