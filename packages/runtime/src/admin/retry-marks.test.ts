import { describe, expect, it } from "vitest";
import type { AttemptError } from "../core/job.js";
import type { AuditEntry } from "./audit.js";
import { retryMarks } from "./retry-marks.js";

const failure = (attempt: number, at: string): AttemptError => ({ attempt, at, class: "CardDeclined", message: "card declined" });
const retry = (at: string, actor: string, outcome: Record<string, unknown> = { retried: 1, missing: 0 }): AuditEntry => ({
  id: `${actor}-${at}`,
  at,
  actor,
  role: "operator",
  via: "ops-dashboard",
  action: "deadLetters.retry",
  ids: ["job-1"],
  count: 1,
  filter: null,
  outcome,
});

describe("retryMarks", () => {
  const errors = [failure(1, "2026-01-01T10:00:00Z"), failure(2, "2026-01-01T10:01:00Z"), failure(1, "2026-01-01T11:00:00Z"), failure(2, "2026-01-01T11:01:00Z")];

  it("puts an audited retry where the attempt numbers restart, naming who did it", () => {
    expect(retryMarks(errors, [retry("2026-01-01T10:30:00.000Z", "olga")])).toEqual([
      { afterErrors: 2, at: "2026-01-01T10:30:00.000Z", actor: "olga", role: "operator", via: "ops-dashboard", action: "deadLetters.retry" },
    ]);
  });

  it("marks a retry the audit trail does not know (jfast jobs retry) from the attempt numbers alone", () => {
    expect(retryMarks(errors, [])).toEqual([{ afterErrors: 2, at: null, actor: null, role: null, via: null, action: null }]);
  });

  it("shows a retry that has not failed since after the last attempt, and leaves out a second one of a job no longer dead", () => {
    const marks = retryMarks(errors.slice(0, 2), [retry("2026-01-01T10:30:00.000Z", "olga"), retry("2026-01-01T10:30:05.000Z", "ada")]);
    expect(marks.map((m) => [m.afterErrors, m.actor])).toEqual([[2, "olga"]]);
  });

  it("ignores a retry that failed, and one from before the attempts it would separate", () => {
    const marks = retryMarks(errors, [retry("2026-01-01T10:30:00.000Z", "mallory", { error: "no queue" }), retry("2026-01-01T09:00:00.000Z", "early")]);
    expect(marks).toEqual([{ afterErrors: 2, at: null, actor: null, role: null, via: null, action: null }]);
  });
});
