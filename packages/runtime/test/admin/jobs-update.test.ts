import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { StandardSchemaV1 } from "../../src/core/payload-schema.js";
import { DASHBOARD, VIEWER, call, eventually, startAdminApp, type AdminApp } from "./admin-harness.js";
import { adminBackendSetups } from "./admin-backends.js";

/** An invoice id is a string starting with "inv-". */
const invoiceSchema: StandardSchemaV1<{ invoice: string; note?: string }> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) =>
      typeof (value as { invoice?: unknown })?.invoice === "string" && (value as { invoice: string }).invoice.startsWith("inv-")
        ? { value: value as { invoice: string } }
        : { issues: [{ message: 'an invoice id starting with "inv-"', path: ["invoice"] }] },
  },
};

const setups = adminBackendSetups("jobupd");

for (const [name, setup] of Object.entries(setups)) {
  describe(`${name}: jobs.update edits a waiting job`, () => {
    let app: AdminApp | null = null;
    afterEach(async () => {
      await app?.close();
      app = null;
    });
    const mutate = (procedure: string, input: unknown) => call(app!.jfast, procedure, { token: DASHBOARD, actor: "operator ana", mutation: true, input });

    it("edits a scheduled job's payload, priority and run time, checked against the schema and audited; a claimed job is refused", { timeout: 60_000 }, async () => {
      const seen: Array<{ payload: unknown; priority: number }> = [];
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      app = await startAdminApp({
        setup,
        tasks: [
          defineTask("billing.strict", { schema: invoiceSchema }, async (payload, { job }) => void seen.push({ payload, priority: job.priority })),
          defineTask("billing.hold", async () => held),
        ],
      });
      const queue = app.jfast.require("queue");
      const job = new Job({ task: "billing.strict", payload: { invoice: "inv-1", note: "keep" }, delayMs: 3_600_000 });
      await queue.enqueue(job);

      if (name === "rabbitmq") {
        const refused = await mutate("jobs.update", { id: job.id, payload: { invoice: "inv-2" } });
        expect(refused.status).toBe(405);
        expect(refused.error?.message).toContain("[NOT_SUPPORTED]");
        expect(refused.error?.message).toContain("cannot change a message once it is published");
        return;
      }

      const invalid = await mutate("jobs.update", { id: job.id, payload: { invoice: 42 } });
      expect(invalid.status).toBe(400);
      expect(invalid.error?.message).toContain("[PAYLOAD_INVALID]");
      expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } })).data.job.payload).toEqual({ invoice: "inv-1", note: "keep" });
      expect((await mutate("jobs.update", { id: job.id })).status).toBe(400);
      expect((await mutate("jobs.update", { id: "no-such-job", priority: 1 })).status).toBe(404);

      const edited = await mutate("jobs.update", { id: job.id, payload: { invoice: "inv-2", note: "keep" }, priority: 2, delayMs: 0 });
      expect(edited.status, JSON.stringify(edited.error)).toBe(200);
      expect(edited.data).toMatchObject({ id: job.id, task: "billing.strict", state: "ready", priority: 2, payloadChanges: 1 });
      await eventually("the edited job ran", async () => seen.length === 1);
      expect(seen).toEqual([{ payload: { invoice: "inv-2", note: "keep" }, priority: 2 }]);

      const entries = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ action: string; actor: string; ids: string[]; filter: unknown; outcome: Record<string, unknown> }>;
      const entry = entries.find((e) => e.action === "jobs.update");
      expect(entry).toMatchObject({
        actor: "ana",
        ids: [job.id],
        filter: { task: "billing.strict", edited: "payload,priority,runAt" },
        outcome: { updated: 1, changed: 1, changes: [{ path: "invoice", before: "inv-1", after: "inv-2" }], priority: { before: 5, after: 2 } },
      });

      const running = new Job({ task: "billing.hold", payload: {} });
      await queue.enqueue(running);
      await eventually("the held job runs", async () => (await call(app!.jfast, "jobs.get", { token: VIEWER, input: { id: running.id } })).data.job?.state === "running");
      const claimed = await mutate("jobs.update", { id: running.id, priority: 0 });
      expect(claimed.status).toBe(409);
      expect(claimed.error?.message).toContain("[JOB_NOT_EDITABLE]");
      expect(claimed.error?.message).toContain("is running");
      release();
    });

    if (name !== "rabbitmq") {
      it("keeps a keyed job under its key: a payload giving another key is refused", { timeout: 60_000 }, async () => {
        app = await startAdminApp({
          setup,
          tasks: [defineTask<{ customer: string; n: number }>("billing.keyed", { concurrency: { key: (p) => p.customer, limit: 1 } }, async () => {})],
        });
        const job = new Job({ task: "billing.keyed", payload: { customer: "c-1", n: 1 }, delayMs: 3_600_000 });
        await app.jfast.require("queue").enqueue(job);
        const same = await mutate("jobs.update", { id: job.id, payload: { customer: "c-1", n: 2 } });
        expect(same.status, JSON.stringify(same.error)).toBe(200);
        const other = await mutate("jobs.update", { id: job.id, payload: { customer: "c-2", n: 2 } });
        expect(other.status).toBe(400);
        expect(other.error?.message).toContain("[KEY_CHANGED]");
        expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } })).data.job.payload).toEqual({ customer: "c-1", n: 2 });
      });
    }
  });
}
