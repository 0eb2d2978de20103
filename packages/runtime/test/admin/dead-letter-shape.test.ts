import { afterEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp } from "./admin-harness.js";

const memory = async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} });

// The dashboard re-reads deadLetters.list whenever dead letters change: it carries the last error only, and the
// history with stacks comes from jobs.get when someone opens one job.
describe("what a dead-letter list row carries", () => {
  let app: AdminApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("lists the last error's class and message, no stack and no history; jobs.get has every attempt's stack", async () => {
    app = await startAdminApp({ setup: memory });
    const [id] = await app.killCharges(1);
    const list = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 100 } });
    expect(list.status).toBe(200);
    const row = list.data.items[0];
    expect(row.id).toBe(id);
    expect(row.lastError).toMatchObject({ class: "CardDeclined", message: expect.stringContaining("card declined") });
    expect(row.lastError).not.toHaveProperty("stack");
    expect(row).not.toHaveProperty("errors");
    expect(JSON.stringify(list.data)).not.toMatch(/\n\s+at /);

    const detail = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } });
    expect(detail.data.job.errors).toHaveLength(row.attempts);
    for (const error of detail.data.job.errors) expect(error.stack).toMatch(/CardDeclined[\s\S]*\n\s+at /);
  });

  it("names the newest dead letter in the overview, so a client knows when its list is out of date", async () => {
    app = await startAdminApp({ setup: memory });
    expect((await call(app.jfast, "overview.get", { token: VIEWER })).data.queue.newestDead).toBeNull();
    // The overview's depths come from the readiness check, shared for a second.
    const newest = (jfast: AdminApp["jfast"]) => eventually("the new dead letter counted", async () => (await call(jfast, "overview.get", { token: VIEWER })).data.queue.newestDead);
    const [first] = await app.killCharges(1);
    expect(await newest(app.jfast)).toEqual({ id: first, diedAt: expect.any(String) });
    const [second] = await app.killCharges(1);
    await eventually("the second one named", async () => (await call(app!.jfast, "overview.get", { token: VIEWER })).data.queue.newestDead?.id === second);
  });
});
