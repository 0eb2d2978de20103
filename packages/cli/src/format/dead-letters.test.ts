import { describe, expect, it } from "vitest";
import type { DeadJob } from "@jfast/runtime";
import { describeError, formatDeadLetters } from "./dead-letters.js";

function dead(id: string, diedAt: string, message: string): DeadJob {
  return {
    job: {
      id,
      task: "invoice.send_email",
      priority: 5,
      payload: {},
      attempts: 3,
      maxAttempts: 3,
      availableAt: diedAt,
      createdAt: diedAt,
      tenantId: null,
      requestId: null,
      trace: null,
      errors: [],
      timeoutMs: null,
    },
    diedAt,
    lastError: { attempt: 3, at: diedAt, class: "ValueError", message },
  };
}

describe("formatDeadLetters", () => {
  it("prints one aligned row per dead letter with the error that killed it, in the given order", () => {
    const now = Date.parse("2025-01-01T12:00:00Z");
    const text = formatDeadLetters(
      [dead("b", "2025-01-01T11:59:00.000Z", "card declined\nat line 2"), dead("a", "2025-01-01T10:00:00.000Z", "timeout")],
      now,
    );
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TASK\s+ATTEMPTS\s+DIED\s+ERROR$/);
    expect(lines[1]).toContain("b   invoice.send_email  3/3       2025-01-01T11:59:00Z (1m ago)");
    expect(lines[1]).toMatch(/ValueError: card declined$/);
    expect(lines[2]).toMatch(/^a\s+invoice\.send_email\s+3\/3\s+2025-01-01T10:00:00Z \(2h ago\)\s+ValueError: timeout$/);
  });

  it("says so when there are none", () => {
    expect(formatDeadLetters([])).toBe("no dead letters\n");
  });

  it("names the reason when the error message does not", () => {
    expect(describeError({ attempt: 3, at: "", class: "WorkerLost", message: "lease expired", reason: "worker lost" })).toBe(
      "WorkerLost: lease expired [worker lost]",
    );
  });
});
