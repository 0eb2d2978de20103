import { describe, expect, it } from "vitest";
import { Job } from "../../core/job.js";
import { decodeJob, encodeJob } from "./message.js";
import { Header } from "./names.js";

describe("encodeJob", () => {
  it("publishes a job's first attempt without headers: the task is in `type`, the id in `message-id`", () => {
    const json = new Job({ task: "billing.charge", payload: { amount: 3 } }).toJSON();
    const { content, options } = encodeJob(json);
    expect(options).toMatchObject({ persistent: true, mandatory: true, contentType: "application/json", messageId: json.id, type: "billing.charge" });
    expect(options.headers).toBeUndefined();
    // The body says only what is not a default; the id and the task are read back from the properties.
    expect(JSON.parse(content.toString("utf8"))).toEqual({ payload: { amount: 3 }, createdAt: json.createdAt });
    expect(decodeJob(content, options)).toEqual({ ok: true, json });
  });

  it("gives back every field that differs from a new job's, whatever it is", () => {
    const job = new Job({
      task: "billing.charge",
      payload: ["a", { b: null }],
      maxAttempts: 7,
      delayMs: 60_000,
      tenantId: "acme",
      requestId: "req-1",
      trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "x=1" },
      timeoutMs: 1500,
    });
    job.attempts = 2;
    job.errors = [{ attempt: 1, at: new Date().toISOString(), class: "Error", message: "boom", stack: "Error: boom" }];
    const json = job.toJSON();
    const { content, options } = encodeJob(json);
    expect(decodeJob(content, options)).toEqual({ ok: true, json });
    // Without the properties (a body copied by hand), the id and task are what is missing.
    expect(decodeJob(content)).toMatchObject({ ok: false, reason: expect.stringMatching(/"id" is missing; "task" is missing/) });
  });

  it("reads a full JobJSON body as before, whatever the properties say", () => {
    const json = new Job({ task: "billing.charge", payload: { amount: 3 } }).toJSON();
    expect(decodeJob(Buffer.from(JSON.stringify(json)), { messageId: "other", type: "other.task" })).toEqual({ ok: true, json });
  });

  it("keeps a new job's body small: a no-op job's is under 64 bytes", () => {
    const { content } = encodeJob(new Job({ task: "bench.noop" }).toJSON());
    expect(content.length).toBeLessThan(64);
  });

  it("adds the headers once an attempt was spent, for a long delay, and on dead letters", () => {
    const json = { ...new Job({ task: "billing.charge" }).toJSON(), attempts: 2 };
    expect(encodeJob(json).options.headers).toEqual({ [Header.attempts]: 2, [Header.task]: "billing.charge" });
    const first = new Job({ task: "billing.charge" }).toJSON();
    expect(encodeJob(first, { dueAt: 123 }).options.headers).toMatchObject({ [Header.attempts]: 0, [Header.dueAt]: 123 });
    expect(encodeJob(first, { diedAt: 456 }).options.headers).toMatchObject({ [Header.diedAt]: 456, [Header.errors]: [] });
  });
});
