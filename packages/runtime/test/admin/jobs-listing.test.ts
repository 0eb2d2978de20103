import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";

describe("admin jobs.list, runNow, delete and bulk", () => {
  const apps: AdminApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  async function postgresApp(): Promise<AdminApp> {
    const schema = uniqueSchema("admin");
    const app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      }),
    });
    apps.push(app);
    return app;
  }

  it("postgres: lists scheduled jobs with counts, runs one now and deletes one (audited), in bulk with a preview", async () => {
    const app = await postgresApp();
    const queue = app.jfast.require<{ enqueue(job: Job | Job[]): Promise<unknown> }>("queue");
    // billing.charge always fails here. The job run now gets one attempt, so that it goes straight to the dead
    // letters: with a second one it would be back among the waiting jobs for its backoff, a race with the lists below.
    const jobs = Array.from({ length: 4 }, (_, i) => new Job({ task: "billing.charge", payload: { invoice: `in_${i}` }, delayMs: 60_000 * (i + 1), tenantId: i % 2 ? "acme" : null, ...(i === 0 ? { maxAttempts: 1 } : {}) }));
    await queue.enqueue(jobs);

    const page = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "scheduled", order: "oldest", limit: 3 } });
    expect(page.status).toBe(200);
    expect(page.data.items.map((j: { id: string }) => j.id)).toEqual(jobs.slice(0, 3).map((j) => j.id));
    expect(page.data.counts).toMatchObject({ scheduled: 4 });
    expect(page.data.actions).toEqual(["cancel", "runNow", "delete"]);
    const rest = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "scheduled", order: "oldest", limit: 3, after: page.data.next } });
    expect(rest.data.items.map((j: { id: string }) => j.id)).toEqual([jobs[3]!.id]);
    expect(rest.data.next).toBeNull();
    const acme = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "scheduled", tenantId: "acme" } });
    expect(acme.data.items.map((j: { id: string }) => j.id)).toEqual([jobs[3]!.id, jobs[1]!.id]);
    const bad = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "ready", after: page.data.next } });
    expect(bad.status).toBe(400);

    expect((await call(app.jfast, "jobs.runNow", { token: VIEWER, input: { id: jobs[0]!.id }, mutation: true })).status).toBe(403);
    const ran = await call(app.jfast, "jobs.runNow", { token: OPERATOR, input: { id: jobs[0]!.id }, mutation: true });
    expect(ran.data).toEqual({ id: jobs[0]!.id, done: true, state: "ready" });
    // Due now: no longer scheduled (the service's worker takes it at once).
    const scheduled = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "scheduled" } });
    expect(scheduled.data.items.map((j: { id: string }) => j.id)).not.toContain(jobs[0]!.id);
    const deleted = await call(app.jfast, "jobs.delete", { token: OPERATOR, input: { id: jobs[1]!.id }, mutation: true });
    expect(deleted.data).toEqual({ id: jobs[1]!.id, done: true, state: null });
    expect((await call(app.jfast, "jobs.delete", { token: OPERATOR, input: { id: jobs[1]!.id }, mutation: true })).status).toBe(404);

    const preview = await call(app.jfast, "jobs.bulkPreview", { token: VIEWER, input: { action: "cancel", state: "scheduled" } });
    expect(preview.data).toEqual({ count: 2, capped: false, limit: 1000 });
    const bulk = await call(app.jfast, "jobs.bulk", { token: OPERATOR, input: { action: "cancel", state: "scheduled" }, mutation: true });
    expect(bulk.data).toEqual({ done: 2, skipped: 0, capped: false });
    const cancelled = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "cancelled", order: "oldest" } });
    expect(cancelled.data.items.map((j: { id: string }) => j.id).sort()).toEqual([jobs[2]!.id, jobs[3]!.id].sort());

    const audit = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ action: string; ids: string[]; outcome: unknown; filter: unknown }>;
    const actions = audit.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["jobs.runNow", "jobs.delete", "jobs.bulk.cancel"]));
    expect(audit.find((e) => e.action === "jobs.bulk.cancel")).toMatchObject({ filter: { state: "scheduled" }, outcome: { done: 2 } });
  });

  it("rabbitmq: lists dead letters, and says why it cannot list waiting jobs instead of an empty table", async () => {
    const { AMQP_URL, uniqueQueue, dropQueue } = await import("../rabbitmq/rabbitmq-test-env.js");
    const name = uniqueQueue("admin");
    const app = await startAdminApp({
      setup: async () => ({
        plugins: ["queue"],
        sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${name}"\n${QUEUE_TUNING}`,
        cleanup: () => dropQueue(name),
      }),
    });
    apps.push(app);
    const ready = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "ready" } });
    expect(ready.status).toBe(200);
    expect(ready.data).toMatchObject({ enabled: true, supported: false, items: [] });
    expect(ready.data.reason).toMatch(/cannot list ready jobs: a waiting message cannot be read without taking it out/);
    const dead = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "dead" } });
    expect(dead.data).toMatchObject({ supported: true, items: [] });
    const refused = await call(app.jfast, "jobs.runNow", { token: OPERATOR, input: { id: "0190c1e0-0000-7000-8000-000000000000" }, mutation: true });
    expect(refused.error?.data.code).toBe("METHOD_NOT_SUPPORTED");
  });
});
