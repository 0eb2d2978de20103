import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { StandardSchemaV1 } from "../../src/core/payload-schema.js";
import { DASHBOARD, VIEWER, call, eventually, startAdminApp, type AdminApp } from "./admin-harness.js";
import { adminBackendSetups } from "./admin-backends.js";

/** A schema as zod or valibot would give one: an invoice id is a string starting with "inv-". */
const invoiceSchema: StandardSchemaV1<{ invoice: string }> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) =>
      typeof (value as { invoice?: unknown })?.invoice === "string" && (value as { invoice: string }).invoice.startsWith("inv-")
        ? { value: value as { invoice: string } }
        : { issues: [{ message: 'an invoice id starting with "inv-"', path: ["invoice"] }] },
  },
};

const setups = adminBackendSetups("steer");

for (const [name, setup] of Object.entries(setups)) {
  describe(`${name}: operators steer jobs`, () => {
    let app: AdminApp | null = null;
    afterEach(async () => {
      await app?.close();
      app = null;
    });

    const ANA = "operator ana";
    const mutate = (procedure: string, input: unknown) => call(app!.jfast, procedure, { token: DASHBOARD, actor: ANA, mutation: true, input });
    const dead = async () => (await call(app!.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 50 } })).data.items as Array<{ id: string; task: string; payload: Record<string, unknown> }>;

    it("retries a dead letter with an edited payload, checked against the task's schema, the diff audited", { timeout: 60_000 }, async () => {
      const refunds: unknown[] = [];
      app = await startAdminApp({
        setup,
        tasks: [
          defineTask("billing.strict", { schema: invoiceSchema }, async (payload) => {
            if (payload.invoice === "inv-bad") throw new Error("no such invoice");
            refunds.push(payload);
          }),
        ],
      });
      const job = new Job({ task: "billing.strict", payload: { invoice: "inv-bad", note: "first" } });
      await app.jfast.require("queue").enqueue(job);
      await eventually("the job is a dead letter", async () => (await dead()).some((d) => d.id === job.id));

      const refused = await mutate("deadLetters.retry", { ids: [job.id], payload: { invoice: 42 } });
      expect(refused.status).toBe(400);
      expect(refused.error?.message).toContain("[PAYLOAD_INVALID]");
      expect((await dead()).map((d) => d.id)).toContain(job.id);

      const retried = await mutate("deadLetters.retry", { ids: [job.id], payload: { invoice: "inv-7", note: "first" } });
      expect(retried.status, JSON.stringify(retried.error)).toBe(200);
      expect(retried.data).toMatchObject({ retried: [job.id], missing: [] });
      const newId: string = retried.data.jobId;
      expect(newId).not.toBe(job.id);
      await eventually("the edited job ran", async () => refunds.length === 1);
      expect(refunds).toEqual([{ invoice: "inv-7", note: "first" }]);
      expect((await dead()).map((d) => d.id)).not.toContain(job.id);

      const entries = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ action: string; actor: string; ids: string[]; outcome: Record<string, unknown> }>;
      const entry = entries.find((e) => e.action === "deadLetters.retry" && e.outcome.jobId === newId);
      expect(entry).toMatchObject({ actor: "ana", ids: [job.id], outcome: { retried: 1, changed: 1, changes: [{ path: "invoice", before: "inv-bad", after: "inv-7" }] } });
    });

    it("makes a job of a task of the service, with its delay, priority and tenant, audited; a bad payload or an unknown task is refused", { timeout: 60_000 }, async () => {
      const seen: Array<{ payload: unknown; tenant: string | null }> = [];
      app = await startAdminApp({
        setup,
        tasks: [defineTask("billing.strict", { schema: invoiceSchema }, async (payload, { job }) => void seen.push({ payload, tenant: job.tenantId }))],
      });
      expect((await mutate("jobs.create", { task: "billing.strict", payload: { invoice: 7 } })).error?.message).toContain("[PAYLOAD_INVALID]");
      expect((await mutate("jobs.create", { task: "billing.nope", payload: {} })).status).toBe(400);
      const created = await mutate("jobs.create", { task: "billing.strict", payload: { invoice: "inv-9" }, delayMs: 200, priority: 2, tenant: "acme" });
      expect(created.status, JSON.stringify(created.error)).toBe(200);
      expect(created.data).toMatchObject({ task: "billing.strict" });
      await eventually("the job ran", async () => seen.length === 1);
      expect(seen).toEqual([{ payload: { invoice: "inv-9" }, tenant: "acme" }]);
      const entries = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ action: string; actor: string; ids: string[]; filter: unknown }>;
      expect(entries.filter((e) => e.action === "jobs.create").map((e) => [e.actor, e.ids, e.filter])).toEqual([["ana", [created.data.id], { task: "billing.strict", tenant: "acme" }]]);
    });
  });
}

describe("postgres: an idempotency-aware replay", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });
  const mutate = (procedure: string, input: unknown) => call(app!.jfast, procedure, { token: DASHBOARD, actor: "admin ana", mutation: true, input });

  it("says in a dry run how many chosen dead letters the inbox would skip, and a throttled replay can be stopped", { timeout: 90_000 }, async () => {
    app = await startAdminApp({
      setup: setups.postgres!,
      tasks: [
        defineTask("billing.ship", { session: true, idempotentOn: (p: { order: string }) => p.order }, async () => {
          throw new Error("carrier down");
        }),
      ],
    });
    const queue = app.jfast.require("queue");
    const ships = ["o-1", "o-2", "o-3"].map((order) => new Job({ task: "billing.ship", payload: { order } }));
    await queue.enqueue(ships);
    const charges = await app.killCharges(4);
    await eventually("the shipments are dead", async () => (await app!.backend.depths()).dead >= 7);
    // o-2's effect committed before its job died (a crash after the commit): the inbox holds its key.
    await app.jfast.require<{ sql: { query(text: string, params?: unknown[]): Promise<unknown[]> } }>("database").sql.query(
      "INSERT INTO jfast_inbox (consumer, key) VALUES ('billing.ship', 'o-2')",
    );

    const preview = await call(app.jfast, "deadLetters.replayPreview", { token: VIEWER, input: { filter: { task: "billing.ship" } } });
    expect(preview.data).toEqual({ total: 3, totalExact: true, skippedByInbox: 1, idempotentTasks: ["billing.ship"], unreadable: 0, inboxUnavailable: null });
    const all = await call(app.jfast, "deadLetters.replayPreview", { token: VIEWER, input: {} });
    expect(all.data).toMatchObject({ total: 7, skippedByInbox: 1 });

    const started = await mutate("deadLetters.retryMatching", { filter: { task: "billing.charge" }, ratePerSecond: 1 });
    expect(started.status, JSON.stringify(started.error)).toBe(200);
    const stopped = await mutate("deadLetters.stopReplay", { replayId: started.data.replayId });
    expect(stopped.data).toMatchObject({ replayId: started.data.replayId, stopping: true });
    const ended = await eventually("the replay stopped", async () => {
      const replays = (await call(app!.jfast, "deadLetters.replays", { token: VIEWER })).data as Array<{ replayId: string; state: string; done: number; error: string | null }>;
      const mine = replays.find((r) => r.replayId === started.data.replayId);
      return mine?.state === "stopped" ? mine : null;
    });
    expect(ended.error).toBe("stopped by ana");
    expect(ended.done).toBeLessThan(charges.length);
    expect((await mutate("deadLetters.stopReplay", { replayId: "00000000-0000-4000-8000-000000000000" })).status).toBe(404);
  });
});

describe("memory: a task's payload schema for the New job form", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("answers the JSON Schema a Standard Schema gives, null where it gives none, and 404 for an unknown task", async () => {
    const described: StandardSchemaV1<{ invoice: string }> = {
      "~standard": {
        ...invoiceSchema["~standard"],
        // What zod 4.2+ offers: the Standard JSON Schema interface.
        jsonSchema: { input: () => ({ type: "object", properties: { invoice: { type: "string" } }, required: ["invoice"] }) },
      } as StandardSchemaV1<{ invoice: string }>["~standard"],
    };
    app = await startAdminApp({
      setup: setups.memory!,
      tasks: [defineTask("billing.described", { schema: described }, async () => {}), defineTask("billing.opaque", { schema: invoiceSchema }, async () => {})],
    });
    const schemaOf = async (task: string) => call(app!.jfast, "jobs.taskSchema", { token: VIEWER, input: { task } });
    expect((await schemaOf("billing.described")).data).toEqual({
      task: "billing.described",
      hasSchema: true,
      jsonSchema: { type: "object", properties: { invoice: { type: "string" } }, required: ["invoice"] },
    });
    expect((await schemaOf("billing.opaque")).data).toEqual({ task: "billing.opaque", hasSchema: true, jsonSchema: null });
    expect((await schemaOf("billing.charge")).data).toEqual({ task: "billing.charge", hasSchema: false, jsonSchema: null });
    expect((await schemaOf("billing.nope")).status).toBe(404);
  });
});
