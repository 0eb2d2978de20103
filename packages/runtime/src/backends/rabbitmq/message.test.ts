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
    // The body says only what is not a default; the id and the task are read back from the properties, the
    // time the job was made from its id (a UUIDv7 made at that millisecond).
    expect(JSON.parse(content.toString("utf8"))).toEqual({ payload: { amount: 3 } });
    expect(decodeJob(content, options)).toEqual({ ok: true, json });
  });

  it("carries an id or a task name past 255 bytes in the body: message-id and type cannot hold it", () => {
    const json = new Job({ task: `t.${"é".repeat(200)}`, id: "x".repeat(300), payload: {} }).toJSON();
    const { content, options } = encodeJob(json);
    expect(options.messageId).toBeUndefined();
    expect(options.type).toBeUndefined();
    expect(JSON.parse(content.toString("utf8"))).toMatchObject({ id: json.id, task: json.task });
    expect(decodeJob(content, options)).toEqual({ ok: true, json });
  });

  it("writes the same message from a Job as from its JobJSON, default fields or not", () => {
    const plain = new Job({ task: "billing.charge", payload: { amount: 3 } });
    const full = new Job({
      task: "billing.charge",
      id: "order-7",
      payload: { note: "a\\b \"q\" é" },
      maxAttempts: 4,
      delayMs: 60_000,
      tenantId: "acme",
      requestId: "r-1",
      trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
      timeoutMs: 500,
    });
    const retried = Job.fromJSON({ ...plain.toJSON(), attempts: 2, errors: [{ attempt: 1, at: "2026-01-01T00:00:00.000Z", class: "Error", message: "x" }] });
    for (const job of [plain, full, retried]) {
      const fromJob = encodeJob(job, { dueAt: 5 });
      const fromJson = encodeJob(job.toJSON(), { dueAt: 5 });
      expect(fromJob.content.toString("utf8")).toBe(fromJson.content.toString("utf8"));
      expect({ ...fromJob.options, timestamp: 0 }).toEqual({ ...fromJson.options, timestamp: 0 });
      expect(decodeJob(fromJob.content, fromJob.options)).toEqual({ ok: true, json: job.toJSON() });
    }
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

  it("keeps createdAt in the body unless the id is a UUIDv7 of that very millisecond", () => {
    const at = new Date("2026-11-30T10:00:00.123Z");
    const cases = [
      // A UUIDv7 of another time (an id chosen by the caller), and an id that is no UUIDv7 at all.
      new Job({ task: "billing.charge", id: "01900000-0000-7000-8000-000000000000" }),
      new Job({ task: "billing.charge", id: "invoice-42" }),
    ];
    for (const job of cases) {
      (job as { createdAt: Date }).createdAt = at;
      const json = job.toJSON();
      const { content, options } = encodeJob(json);
      expect(JSON.parse(content.toString("utf8")).createdAt).toBe("2026-11-30T10:00:00.123Z");
      expect(decodeJob(content, options)).toEqual({ ok: true, json });
    }
  });

  it("takes createdAt from a UUIDv7 id when a body published by hand leaves it out", () => {
    const body = Buffer.from(JSON.stringify({ id: "019ad434-797b-7000-8000-000000000000", task: "billing.charge" }));
    const decoded = decodeJob(body);
    expect(decoded).toMatchObject({ ok: true, json: { createdAt: "2025-11-30T10:00:00.123Z", availableAt: "2025-11-30T10:00:00.123Z" } });
  });

  it("reads a full JobJSON body as before, whatever the properties say", () => {
    const json = new Job({ task: "billing.charge", payload: { amount: 3 } }).toJSON();
    expect(decodeJob(Buffer.from(JSON.stringify(json)), { messageId: "other", type: "other.task" })).toEqual({ ok: true, json });
  });

  it("keeps a new job's body small: a no-op job's, max attempts filled in, is under 40 bytes", () => {
    const job = new Job({ task: "bench.noop", maxAttempts: 3 });
    const { content } = encodeJob(job.toJSON());
    expect(content.toString("utf8")).toBe('{"payload":{},"maxAttempts":3}');
    expect(content.length).toBeLessThan(40);
  });

  it("adds the headers once an attempt was spent, for a long delay, and on dead letters", () => {
    const json = { ...new Job({ task: "billing.charge" }).toJSON(), attempts: 2 };
    expect(encodeJob(json).options.headers).toEqual({ [Header.attempts]: 2, [Header.task]: "billing.charge" });
    const first = new Job({ task: "billing.charge" }).toJSON();
    expect(encodeJob(first, { dueAt: 123 }).options.headers).toMatchObject({ [Header.attempts]: 0, [Header.dueAt]: 123 });
    expect(encodeJob(first, { diedAt: 456 }).options.headers).toMatchObject({ [Header.diedAt]: 456, [Header.errors]: [] });
  });
});
