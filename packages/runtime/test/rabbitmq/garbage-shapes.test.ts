import { afterEach, describe, expect, it } from "vitest";
import type amqp from "amqplib";
import { Job } from "../../src/core/job.js";
import { eventually } from "../conformance/harness.js";
import { adminCall, QUEUE_TUNING, startFuzzApp, type FuzzApp } from "../fuzz/fuzz-app.js";
import { reportFigures } from "../fuzz/fuzz-settings.js";
import { AMQP_URL, dropQueue, uniqueQueue, withRawChannel } from "./rabbitmq-test-env.js";

/**
 * Messages on the work queue with wrong headers and bodies, as another publisher or the broker's UI could send
 * them (garbage.test.ts has the bodies that are not JSON at all). Each runs if it reads as a job, or is a dead
 * letter with the reason; the consumer keeps going and the admin views show them.
 */
interface Garbage {
  name: string;
  id: string;
  body: unknown;
  options?: amqp.Options.Publish;
  end: "completed" | "dead";
}

const now = () => new Date().toISOString();

const GARBAGE: Garbage[] = [
  { name: "attempts header a string", id: "h-attempts", body: { id: "h-attempts", task: "fuzz.ok" }, options: { headers: { "x-jfast-attempts": "many" } }, end: "completed" },
  { name: "attempts header negative", id: "h-attempts-neg", body: { id: "h-attempts-neg", task: "fuzz.ok" }, options: { headers: { "x-jfast-attempts": -7 } }, end: "completed" },
  { name: "due-at header a string", id: "h-due", body: { id: "h-due", task: "fuzz.ok" }, options: { headers: { "x-jfast-due-at": "tomorrow" } }, end: "completed" },
  { name: "due-at header in the past", id: "h-due-past", body: { id: "h-due-past", task: "fuzz.ok" }, options: { headers: { "x-jfast-due-at": -1e15 } }, end: "completed" },
  { name: "task header differs from the body", id: "h-task", body: { id: "h-task", task: "fuzz.ok" }, options: { type: "nobody.knows", headers: { "x-jfast-task": 42 } }, end: "completed" },
  { name: "headers of nested tables and arrays", id: "h-nested", body: { id: "h-nested", task: "fuzz.ok" }, options: { headers: { "x-jfast-errors": { a: [1, { b: null }] }, "x-death": "not a list" } }, end: "completed" },
  { name: "no message id, id only in the body", id: "b-id", body: { id: "b-id", task: "fuzz.ok" }, end: "completed" },
  { name: "id only in message-id, task only in type", id: "p-only", body: { payload: { x: 1 } }, options: { messageId: "p-only", type: "fuzz.ok" }, end: "completed" },
  { name: "a task nobody knows", id: "b-unknown", body: { id: "b-unknown", task: "nobody.knows" }, end: "dead" },
  { name: "attempts past maxAttempts", id: "b-spent", body: { id: "b-spent", task: "fuzz.ok", attempts: 9, maxAttempts: 2 }, end: "completed" },
  { name: "attempts a fraction", id: "b-fraction", body: { id: "b-fraction", task: "fuzz.ok", attempts: 1.5 }, end: "dead" },
  { name: "maxAttempts zero", id: "b-max0", body: { id: "b-max0", task: "fuzz.ok", maxAttempts: 0 }, end: "dead" },
  { name: "createdAt not a date", id: "b-created", body: { id: "b-created", task: "fuzz.ok", createdAt: "yesterday" }, end: "dead" },
  { name: "availableAt long ago", id: "b-old", body: { id: "b-old", task: "fuzz.ok", availableAt: "1900-01-01T00:00:00Z", createdAt: now() }, end: "completed" },
  { name: "errors an object", id: "b-errors", body: { id: "b-errors", task: "fuzz.ok", errors: { a: 1 } }, end: "dead" },
  { name: "errors of numbers", id: "b-errors-n", body: { id: "b-errors-n", task: "fuzz.ok", errors: [1, 2] }, end: "dead" },
  { name: "trace a string", id: "b-trace", body: { id: "b-trace", task: "fuzz.ok", trace: "00-x" }, end: "dead" },
  { name: "tenantId a number", id: "b-tenant", body: { id: "b-tenant", task: "fuzz.ok", tenantId: 5 }, end: "dead" },
  // What `new Job` refuses cannot be handed to a worker: set aside with the reason (it once failed the whole claim).
  { name: "payload with a NUL", id: "b-nul", body: { id: "b-nul", task: "fuzz.ok", payload: { note: "a\u0000b" } }, end: "dead" },
  { name: "a lone surrogate in the tenant", id: "b-surrogate", body: { id: "b-surrogate", task: "fuzz.ok", tenantId: "\ud800" }, end: "dead" },
  { name: "an id of 300 characters", id: "x".repeat(300), body: { id: "x".repeat(300), task: "nobody.knows" }, end: "dead" },
  { name: "a task name of 300 characters", id: "b-long-task", body: { id: "b-long-task", task: "t".repeat(300) }, end: "dead" },
  { name: "content type and encoding that lie", id: "b-ctype", body: { id: "b-ctype", task: "fuzz.ok" }, options: { contentType: "image/png", contentEncoding: "gzip" }, end: "completed" },
];

describe("rabbitmq: messages with wrong headers and bodies", () => {
  let app: FuzzApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("each runs or is a dead letter with the reason; the consumer keeps going", { timeout: 60_000 }, async () => {
    const queue = uniqueQueue("garbage-shapes");
    app = await startFuzzApp(async () => ({
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
      cleanup: () => dropQueue(queue),
    }));
    const fuzz = app;
    await withRawChannel(async (channel) => {
      // A publisher sets message-id to the job's id (a message without one is listed under an id made from its body).
      for (const g of GARBAGE) channel.sendToQueue(queue, Buffer.from(JSON.stringify(g.body)), { persistent: true, ...(g.id.length <= 255 && g.id !== "b-id" ? { messageId: g.id } : {}), ...g.options });
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    const canary = new Job({ task: "fuzz.canary" });
    await fuzz.queue.enqueue(canary);
    await eventually("the canary published after the garbage to run", async () => fuzz.runs.canaries.has(canary.id), 20_000);
    const dead = await eventually("every message run or dead", async () => {
      const list = await fuzz.backend.listDead({ limit: 100 });
      const ids = new Set(list.map((d) => d.job.id));
      return GARBAGE.every((g) => fuzz.runs.payloads.has(g.id) || ids.has(g.id)) ? list : null;
    }).catch(async () => fuzz.backend.listDead({ limit: 100 }));
    const byId = new Map(dead.map((d) => [d.job.id, d]));
    const ends = GARBAGE.map((g) => {
      const d = byId.get(g.id);
      const end = fuzz.runs.payloads.has(g.id) ? "completed" : d && d.lastError?.reason && d.lastError.message ? "dead" : "neither run nor dead";
      return `${g.name}: ${end}`;
    });
    expect(ends).toEqual(GARBAGE.map((g) => `${g.name}: ${g.end}`));
    expect(fuzz.runs.payloads.get("p-only")).toEqual([{ x: 1 }]);
    const deadCount = GARBAGE.filter((g) => g.end === "dead").length;
    reportFigures({ kind: "garbage", suite: "rabbitmq messages", inputs: GARBAGE.length, completed: GARBAGE.length - deadCount, quarantined: deadCount, lost: 0 });

    const list = await adminCall(fuzz.jfast, "deadLetters.list", { input: { limit: 200 } });
    expect(list.status, JSON.stringify(list.error)).toBe(200);
    expect(list.data.items).toHaveLength(GARBAGE.filter((g) => g.end === "dead").length);
    expect((await adminCall(fuzz.jfast, "deadLetters.groups")).status).toBe(200);
    for (const g of GARBAGE.filter((x) => x.end === "dead" && x.id.length <= 200)) {
      const detail = await adminCall(fuzz.jfast, "jobs.get", { input: { id: g.id } });
      expect(detail.status, `${g.name}: ${JSON.stringify(detail.error)}`).toBe(200);
      expect(detail.data.job?.state, g.name).toBe("dead");
    }
    const discarded = await adminCall(fuzz.jfast, "deadLetters.discardMatching", { input: {}, mutation: true });
    expect(discarded.status, JSON.stringify(discarded.error)).toBe(200);
    expect((await fuzz.backend.depths()).dead).toBe(0);
  });
});
