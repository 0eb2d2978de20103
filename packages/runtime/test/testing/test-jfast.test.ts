import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTask, task } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import { createTestJfast, type TestJfast } from "../../src/testing/test-jfast.js";

/**
 * The test helpers of @jfast/runtime/testing (docs/testing.md): manual and inline modes, drain, what was enqueued,
 * and one handler performed directly; the same helpers from node:test, through the built package.
 */
describe("createTestJfast", () => {
  const apps: TestJfast[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop();
  });

  const sent: string[] = [];
  const sendReceipt = defineTask("shop.send_receipt", async (payload: { order: number }) => {
    sent.push(`receipt:${payload.order}`);
    return { sent: true };
  });
  const placeOrder = defineTask("shop.place_order", async (payload: { order: number }, { ctx }) => {
    await ctx.require("queue").enqueue(sendReceipt.job({ order: payload.order }));
    return { placed: payload.order };
  });
  const failing = defineTask("shop.flaky", { maxAttempts: 2 }, async () => {
    throw new PermanentError("the card was declined");
  });

  async function app(mode: "manual" | "inline" = "manual") {
    const t = await createTestJfast({ mode, tasks: [sendReceipt, placeOrder, failing] });
    apps.push(t);
    return t;
  }

  it("manual: keeps enqueued jobs until drain, which runs them and the jobs they enqueue, and says what ran", async () => {
    sent.length = 0;
    const t = await app();
    const queue = t.jfast.require("queue");
    await queue.enqueue([placeOrder.job({ order: 1 }), placeOrder.job({ order: 2 }), new Job({ task: "shop.flaky" })]);
    expect(sent).toEqual([]);
    await t.assertEnqueued({ task: placeOrder, count: 2 });
    await t.assertEnqueued({ task: "shop.place_order", payload: { order: 2 } });
    await t.refuteEnqueued({ task: sendReceipt });
    await expect(t.assertEnqueued({ task: placeOrder, payload: { order: 3 } })).rejects.toMatchObject({
      code: "TEST_ASSERTION",
      message: expect.stringContaining('waiting "shop.place_order" jobs: {"order":1}, {"order":2}'),
    });
    const ran = await t.drain();
    expect(sent.sort()).toEqual(["receipt:1", "receipt:2"]);
    expect(ran.filter((r) => r.task === "shop.place_order").map((r) => [r.outcome, r.result])).toEqual([
      ["completed", { placed: 1 }],
      ["completed", { placed: 2 }],
    ]);
    expect(ran.filter((r) => r.task === "shop.send_receipt")).toHaveLength(2);
    expect(ran.find((r) => r.task === "shop.flaky")).toMatchObject({ outcome: "dead", error: { class: "PermanentError", message: "the card was declined" } });
    expect(await t.enqueued({ task: placeOrder })).toEqual([]);
  });

  it("drains one task's jobs only when asked", async () => {
    sent.length = 0;
    const t = await app();
    await t.jfast.require("queue").enqueue([placeOrder.job({ order: 5 }), sendReceipt.job({ order: 6 })]);
    const ran = await t.drain({ task: sendReceipt });
    expect(ran.map((r) => r.task)).toEqual(["shop.send_receipt"]);
    await t.assertEnqueued({ task: placeOrder, payload: { order: 5 }, count: 1 });
  });

  it("inline: an enqueue runs its jobs, and theirs, before it returns", async () => {
    sent.length = 0;
    const t = await app("inline");
    await t.jfast.require("queue").enqueue(placeOrder.job({ order: 9 }));
    expect(sent).toEqual(["receipt:9"]);
    await t.refuteEnqueued({ task: sendReceipt });
  });

  it("performs one handler directly, with its schema and tenant, without the queue", async () => {
    const seen: unknown[] = [];
    const typed = task("shop.typed", { schema: z.object({ n: z.number(), tags: z.array(z.string()).default([]) }) }, async (payload) => {
      seen.push(payload);
      return payload.n * 2;
    });
    const tenants: (string | null)[] = [];
    const tenanted = defineTask("shop.tenanted", async (_payload: object, { job }) => void tenants.push(job.tenantId));
    const t = await createTestJfast({ tasks: [typed, tenanted] });
    apps.push(t);
    expect(await t.perform(typed, { n: 21 })).toBe(42);
    expect(seen).toEqual([{ n: 21, tags: [] }]);
    await expect(t.perform(typed, { n: "x" } as never)).rejects.toMatchObject({ name: "PayloadInvalidError" });
    await t.perform(tenanted, {}, { tenantId: "acme" });
    expect(tenants).toEqual(["acme"]);
    await t.refuteEnqueued({ task: typed });
  });

  it("works from node:test through the built package", { timeout: 60_000 }, async () => {
    const fixture = path.join(import.meta.dirname, "fixtures", "node-test.mjs");
    const { stdout } = await promisify(execFile)(process.execPath, ["--test", "--test-reporter=spec", fixture], { cwd: path.dirname(fixture) });
    expect(stdout).toMatch(/✔ drains what an order enqueued/);
    expect(stdout).toMatch(/ℹ fail 0/);
  });
});
