import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

/** A PostgreSQL service with a `media` queue beside `default` (docs/queues.md#admin-api). */
function postgresWithMedia(schema = uniqueSchema("adminq")): () => Promise<AdminBackendSetup> {
  return async () => ({
    plugins: ["database", "queue"],
    sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}\n[queues.media]\nconcurrency = 1\n`,
    cleanup: () => dropSchema(schema),
  });
}

describe("postgres: the admin API per named queue", () => {
  let app: AdminApp;
  afterEach(async () => {
    await app?.close();
  });

  it("lists each queue's depths and tasks, keeps dead letters per queue, and pauses one queue's tasks", async () => {
    const resize = defineTask("media.resize", { queue: "media" }, async () => {
      throw new PermanentError("corrupt image");
    });
    app = await startAdminApp({ setup: postgresWithMedia(), tasks: [resize] });
    const job = new Job({ task: "media.resize", payload: {} });
    await app.jfast.require("queue").enqueue(job);
    await app.killCharges(1);
    await eventually("the media job dead", async () => (await app.jfast.require("queue").queue("media").backend.depths()).dead === 1);

    const { data } = await call(app.jfast, "queues.list", { token: VIEWER });
    expect(data.queues.map((q: { name: string; backendName: string; dead: number; concurrency: number }) => [q.name, q.backendName, q.dead, q.concurrency])).toEqual([
      ["default", "jfast.jobs", 1, 4],
      ["media", "jfast.jobs:media", 1, 1],
    ]);
    expect(data.tasks.find((t: { task: string }) => t.task === "media.resize")).toMatchObject({ queue: "media", dead: 1 });
    const onlyMedia = await call(app.jfast, "queues.list", { token: VIEWER, input: { queue: "media" } });
    expect(onlyMedia.data.tasks.map((t: { task: string }) => t.task)).toEqual(["media.resize"]);

    const mediaDead = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { queue: "media" } });
    expect(mediaDead.data.items.map((d: { id: string }) => d.id)).toEqual([job.id]);
    const defaultDead = await call(app.jfast, "deadLetters.list", { token: VIEWER });
    expect(defaultDead.data.items.map((d: { task: string }) => d.task)).toEqual(["billing.charge"]);
    const unknown = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { queue: "nope" } });
    expect(unknown.status).toBe(400);
    expect(unknown.error?.message).toContain('no queue named "nope"');

    const overview = await call(app.jfast, "overview.get", { token: VIEWER });
    expect(overview.data.queue.queues.map((q: { name: string }) => q.name)).toEqual(["default", "media"]);

    const paused = await call(app.jfast, "queues.pauseQueue", { token: OPERATOR, input: { queue: "media" }, mutation: true });
    expect(paused.data).toEqual({ queue: "media", paused: true, tasks: ["media.resize"] });
    const after = await call(app.jfast, "queues.list", { token: VIEWER });
    expect(after.data.tasks.filter((t: { paused: boolean }) => t.paused).map((t: { task: string }) => t.task)).toEqual(["media.resize"]);
    const resumed = await call(app.jfast, "queues.resumeQueue", { token: OPERATOR, input: { queue: "media" }, mutation: true });
    expect(resumed.data).toEqual({ queue: "media", paused: false, resumed: 1 });

    const retried = await call(app.jfast, "deadLetters.retry", { token: OPERATOR, input: { ids: [job.id], queue: "media" }, mutation: true });
    expect(retried.data).toEqual({ retried: [job.id], missing: [] });

    const metrics = await (await app.jfast.fetch(new Request("http://service/metrics"))).text();
    expect(metrics).toContain('queue="jfast.jobs:media"');
    expect(metrics).toContain('queue="jfast.jobs"');
  });
});
