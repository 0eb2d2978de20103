import { describe, expect, it } from "vitest";
import { withRequest } from "../context/context.js";
import { Job } from "./job.js";

describe("Job.restore", () => {
  const fields = {
    id: "j-1",
    task: "billing.charge",
    priority: 2,
    payload: { amount: 3 },
    attempts: 2,
    maxAttempts: 5,
    availableAt: new Date("2026-01-02T03:04:05.678Z"),
    createdAt: new Date("2026-01-01T00:00:00.000Z"),
    tenantId: null,
    requestId: "r-9",
    trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    errors: [{ attempt: 1, at: "2026-01-02T03:04:05.000Z", class: "Error", message: "boom" }],
    timeoutMs: 1000,
  };

  it("gives back the stored job as it was, and takes nothing from the request it is restored in", () => {
    const job = withRequest({ tenantId: "acme", requestId: "other" }, () => Job.restore(fields));
    expect(job).toBeInstanceOf(Job);
    expect(job.toJSON()).toEqual({ ...fields, availableAt: "2026-01-02T03:04:05.678Z", createdAt: "2026-01-01T00:00:00.000Z" });
  });

  it("leaves the payload check to new Job: a restored job is never refused", () => {
    expect(() => new Job({ task: "x.y", payload: { n: 1n } })).toThrow(/payload of a "x.y" job cannot be stored: the value at n is a BigInt/);
    const restored = Job.restore({ ...fields, payload: { n: 1n } });
    expect((restored.payload as { n: bigint }).n).toBe(1n);
    // The check is back for the next new Job.
    expect(() => new Job({ task: "x.y", payload: { n: 1n } })).toThrow(/payload of a "x.y" job cannot be stored: the value at n is a BigInt/);
  });
});
