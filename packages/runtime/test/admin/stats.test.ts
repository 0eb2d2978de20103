import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp } from "./admin-harness.js";

describe("postgres: admin stats.latency and stats.series", () => {
  const record = defineTask("billing.record", async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
  });
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("reads each task's counts and run/wait percentiles, per queue with the oldest waiting age, and a zero-filled series", async () => {
    const schema = uniqueSchema("stats");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      }),
      tasks: [record],
    });
    const queue = app.jfast.require("queue");
    await queue.enqueue(Array.from({ length: 5 }, () => new Job({ task: "billing.record" })));
    await eventually("the records to complete", async () => {
      const records = (await app!.backend.depthsByTask()).tasks["billing.record"];
      return !records || records.ready + records.running === 0;
    });
    // What this process counted is in the store after its next flush.
    await queue.queues.get("default")!.throughput!.flush();

    const latency = await call(app.jfast, "stats.latency", { token: VIEWER });
    expect(latency.status).toBe(200);
    expect(latency.data).toMatchObject({ enabled: true, reason: null, span: "minute", stored: "sql", sinceMs: 3_600_000 });
    const row = latency.data.tasks.find((t: { task: string }) => t.task === "billing.record");
    expect(row).toMatchObject({ task: "billing.record", queue: "default", completed: 5, failed: 0, dead: 0 });
    expect(row.runMs.p50).toBeGreaterThanOrEqual(20);
    expect(row.waitMs.p99).not.toBeNull();
    expect(latency.data.queues).toEqual([expect.objectContaining({ queue: "default", completed: 5, oldestWaitingMs: null })]);

    const series = await call(app.jfast, "stats.series", { token: VIEWER, input: { since: "24h", task: "billing.record" } });
    expect(series.status).toBe(200);
    expect(series.data.points).toHaveLength(1440);
    expect(series.data.points.reduce((n: number, p: { completed: number }) => n + p.completed, 0)).toBe(5);
    const week = await call(app.jfast, "stats.series", { token: VIEWER, input: { since: "7d" } });
    expect(week.data).toMatchObject({ span: "hour" });
    expect(week.data.points).toHaveLength(168);
    expect(week.data.points.at(-1).completed).toBeGreaterThanOrEqual(5);

    const bad = await call(app.jfast, "stats.series", { token: VIEWER, input: { since: "8d" } });
    expect(bad.status).toBe(400);
  });
});
