import { describe, expect, it } from "vitest";
import { Job } from "../../core/job.js";
import { classifyArrival } from "./arrival.js";
import { decodeJob, encodeJob, unreadableJob } from "./message.js";
import { Header } from "./names.js";

function message(content: Buffer | string, options: { redelivered?: boolean; headers?: Record<string, unknown> } = {}) {
  return {
    content: typeof content === "string" ? Buffer.from(content) : content,
    fields: { redelivered: options.redelivered ?? false },
    properties: { headers: options.headers },
  };
}

/** A job as jfast publishes it: its body, with the id and task in the message's properties. */
function published(json: ReturnType<Job["toJSON"]>, options: { redelivered?: boolean; headers?: Record<string, unknown> } = {}) {
  const { content, options: props } = encodeJob(json);
  const m = message(content, options);
  return { ...m, properties: { ...m.properties, messageId: props.messageId, type: props.type } };
}

const job = new Job({ task: "invoice.send", payload: { id: 7 }, tenantId: "acme", requestId: null, trace: null, maxAttempts: 3 });

describe("arrivals on the work queue", () => {
  it("hands out a fresh job", () => {
    const arrival = classifyArrival(published(job.toJSON()), Date.now());
    expect(arrival).toEqual({ kind: "ready", json: job.toJSON() });
  });

  it("treats a redelivery as a lost attempt", () => {
    expect(classifyArrival(published(job.toJSON(), { redelivered: true }), Date.now()).kind).toBe("lost");
  });

  it("sends an overflowing delay round again before its due time, whoever held it", () => {
    const now = Date.now();
    const early = classifyArrival(published(job.toJSON(), { redelivered: true, headers: { [Header.dueAt]: now + 5000 } }), now);
    expect(early).toMatchObject({ kind: "early", dueAt: now + 5000 });
    const due = classifyArrival(published(job.toJSON(), { headers: { [Header.dueAt]: now - 1 } }), now);
    expect(due.kind).toBe("ready");
  });

  it("names what is wrong with a body that is not a job, without throwing", () => {
    const reasons = [
      message("not json at all"),
      message("[1, 2]"),
      message("42"),
      message("{}"),
      message(JSON.stringify({ id: 5, task: "x.y" })),
      message(JSON.stringify({ id: "a", task: "x.y", attempts: "two" })),
      message(JSON.stringify({ id: "a", task: "x.y", errors: "none" })),
      message(Buffer.from([0xff, 0xfe, 0x00, 0x9c])),
    ].map((m) => classifyArrival(m, Date.now()));
    for (const r of reasons) expect(r.kind).toBe("unreadable");
    expect(reasons.map((r) => (r.kind === "unreadable" ? r.reason : ""))).toEqual([
      expect.stringContaining("not JSON"),
      expect.stringContaining("an array"),
      expect.stringContaining("number"),
      expect.stringMatching(/"id" is missing.*"task" is missing/),
      expect.stringContaining(`"id" must be a non-empty string`),
      expect.stringContaining(`"attempts" must be a number`),
      expect.stringContaining(`"errors" must be an array`),
      expect.stringContaining("not JSON"),
    ]);
  });

  it("accepts a minimal hand-published job with defaults", () => {
    const decoded = decodeJob(Buffer.from(JSON.stringify({ id: "by-hand", task: "invoice.send" })));
    expect(decoded).toMatchObject({ ok: true, json: { id: "by-hand", task: "invoice.send", payload: {}, attempts: 0, errors: [], maxAttempts: null } });
  });

  it("wraps an unreadable body into a dead job that keeps the original", () => {
    const binary = Buffer.from([0xff, 0x00, 0x01]);
    const dead = unreadableJob({ content: binary, reason: "the body is not JSON", queue: "q", exchange: "", routingKey: "q" });
    expect(dead.payload).toMatchObject({ body: binary.toString("base64"), encoding: "base64" });
    expect(dead.task).toBe("jfast.corrupt_job");
    expect(dead.errors[0]).toMatchObject({ class: "CorruptJob", reason: "corrupt job" });
    expect(dead.id).toMatch(/^unreadable-/);
    const text = unreadableJob({ content: Buffer.from("hello"), reason: "x", queue: "q", exchange: "", routingKey: "q", messageId: "m-1" });
    expect(text).toMatchObject({ id: "m-1", payload: { body: "hello", encoding: "utf8" } });
  });
});
