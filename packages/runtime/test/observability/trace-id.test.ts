import { describe, expect, it } from "vitest";
import { createRedaction } from "../../src/admin/redact.js";
import { deadLetterView } from "../../src/admin/views.js";
import { withRequest } from "../../src/context/context.js";
import { Job } from "../../src/core/job.js";
import { traceIdOf } from "../../src/observability/trace-id.js";

const NO_REDACTION = createRedaction({ fields: [], defaults: false });

describe("a dead letter names the trace of the request that caused it", () => {
  it("parses the trace id from a traceparent, null when absent, malformed or all zeros", () => {
    expect(traceIdOf("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(traceIdOf(null)).toBeNull();
    expect(traceIdOf("not-a-traceparent")).toBeNull();
    expect(traceIdOf(`00-${"0".repeat(32)}-00f067aa0ba902b7-01`)).toBeNull();
  });

  it("the admin API's dead-letter view carries traceId from the job's stored traceparent", () => {
    const job = withRequest({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }, () => new Job({ task: "billing.charge" }));
    const error = { attempt: 1, at: new Date().toISOString(), class: "CardDeclined", message: "declined" };
    const view = deadLetterView({ job: { ...job.toJSON(), errors: [error] }, diedAt: new Date().toISOString(), lastError: error }, NO_REDACTION);
    expect(view.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    const untraced = deadLetterView({ job: new Job({ task: "billing.charge" }).toJSON(), diedAt: new Date().toISOString(), lastError: null }, NO_REDACTION);
    expect(untraced.traceId).toBeNull();
  });
});
