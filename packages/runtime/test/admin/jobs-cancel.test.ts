import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, startAdminApp, type AdminApp } from "./admin-harness.js";

describe("admin jobs.cancel", () => {
  const apps: AdminApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it("postgres: an operator cancels a waiting job (audited); a viewer cannot; an unknown id is NOT_FOUND", async () => {
    const schema = uniqueSchema("admin");
    const app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      }),
    });
    apps.push(app);
    const job = new Job({ task: "billing.charge", payload: { invoice: "in_1" }, delayMs: 60_000, priority: 2 });
    await app.jfast.require<{ enqueue(job: Job): Promise<unknown> }>("queue").enqueue(job);
    // The job view shows its priority (docs/tasks.md#priority).
    expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } })).data.job.priority).toBe(2);

    const refused = await call(app.jfast, "jobs.cancel", { token: VIEWER, input: { id: job.id }, mutation: true });
    expect(refused.status).toBe(403);
    expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } })).data.job.state).toBe("ready");

    const done = await call(app.jfast, "jobs.cancel", { token: OPERATOR, input: { id: job.id }, mutation: true });
    expect(done.status).toBe(200);
    expect(done.data).toEqual({ id: job.id, cancelled: true, state: "cancelled" });
    expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } })).data.job.state).toBe("cancelled");
    const again = await call(app.jfast, "jobs.cancel", { token: OPERATOR, input: { id: job.id }, mutation: true });
    expect(again.data).toEqual({ id: job.id, cancelled: false, state: "cancelled" });

    const unknown = await call(app.jfast, "jobs.cancel", { token: OPERATOR, input: { id: "no-such-job" }, mutation: true });
    expect(unknown.status).toBe(404);
    expect(unknown.error?.data.code).toBe("NOT_FOUND");

    const audit = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries;
    expect(audit.map((e: { action: string }) => e.action)).toEqual(["jobs.cancel", "jobs.cancel", "jobs.cancel"]);
    expect(audit[2]).toMatchObject({ actor: "alice", role: "operator", ids: [job.id], outcome: { cancelled: true, state: "cancelled" } });
  });

  it("rabbitmq with the database: the cancellation is recorded for the message's delivery", async () => {
    const { AMQP_URL, uniqueQueue, dropQueue } = await import("../rabbitmq/rabbitmq-test-env.js");
    const name = uniqueQueue("admin");
    const schema = uniqueSchema("admin");
    const app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${name}"\n${QUEUE_TUNING}`,
        cleanup: async () => {
          await dropQueue(name);
          await dropSchema(schema);
        },
      }),
    });
    apps.push(app);
    const job = new Job({ task: "billing.charge", payload: { invoice: "in_2" }, delayMs: 60_000 });
    await app.jfast.require<{ enqueue(job: Job): Promise<unknown> }>("queue").enqueue(job);
    const done = await call(app.jfast, "jobs.cancel", { token: OPERATOR, input: { id: job.id }, mutation: true });
    expect(done.status).toBe(200);
    expect(done.data).toEqual({ id: job.id, cancelled: true, state: "cancelled" });
    const again = await call(app.jfast, "jobs.cancel", { token: OPERATOR, input: { id: job.id }, mutation: true });
    expect(again.data).toEqual({ id: job.id, cancelled: false, state: "cancelled" });
  });

  it("rabbitmq: METHOD_NOT_SUPPORTED, saying why", async () => {
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
    const refused = await call(app.jfast, "jobs.cancel", { token: OPERATOR, input: { id: "0190c1e0-0000-7000-8000-000000000000" }, mutation: true });
    expect(refused.status).toBe(405);
    expect(refused.error?.data.code).toBe("METHOD_NOT_SUPPORTED");
    expect(refused.error?.message).toContain("RabbitMQ cannot take a waiting message out of the middle of a queue");
  });
});
