import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { createLogger } from "../../src/observability/logger.js";
import type { TaskDefinition } from "../../src/core/task.js";

/** A task's `unique` option reaches every job of it through queue.enqueue, which answers each job's outcome. */
describe("unique jobs through a service's queue", () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function service(tasks: TaskDefinition[], queueToml = 'backend = "memory"', plugins = '["queue"]'): Promise<Jfast> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-unique-"));
    closers.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "svc"\n\n[plugins]\nenabled = ${plugins}\n\n[plugin.queue]\n${queueToml}\n`);
    const jfast = await createJfast({ root, env: {}, tasks, logger: createLogger({ service: "svc", level: "silent" }) });
    await jfast.start();
    closers.push(() => jfast.stop());
    return jfast;
  }

  it("derives the key from the payload with the task's key function, per tenant", async () => {
    const rebuild = defineTask("svc.rebuild", { unique: { key: (p: { report: string }) => p.report } }, async () => undefined);
    const queue = (await service([rebuild])).require("queue");
    const first = await queue.enqueue(rebuild.job({ report: "q3" }));
    expect(first.jobs).toEqual([{ id: first.inserted[0], duplicate: false }]);
    const second = await queue.enqueue([rebuild.job({ report: "q3" }), rebuild.job({ report: "q4" }), rebuild.job({ report: "q3" }, { tenantId: "acme" })]);
    expect(second.jobs[0]).toEqual({ id: first.inserted[0], duplicate: true });
    expect(second.jobs.slice(1).map((j) => j.duplicate)).toEqual([false, false]);
    expect(second.inserted).toHaveLength(2);
    const info = await queue.backend.getJob({ id: first.inserted[0]! });
    expect(info?.job.unique).toEqual({ key: "q3", periodMs: null, states: ["ready", "running"] });
  });

  it("takes the payload itself as the key by default, whatever the order of its fields", async () => {
    const sync = defineTask("svc.sync", { unique: {} }, async () => undefined);
    const queue = (await service([sync])).require("queue");
    await queue.enqueue(sync.job({ a: 1, b: { c: 2, d: 3 } }));
    const again = await queue.enqueue(sync.job({ b: { d: 3, c: 2 }, a: 1 }));
    expect(again.jobs[0]!.duplicate).toBe(true);
    expect((await queue.enqueue(sync.job({ a: 2 }))).jobs[0]!.duplicate).toBe(false);
  });

  it("fills a job's own key with the task's period; a job's period or states override the task's", async () => {
    const remind = defineTask("svc.remind", { unique: { periodMs: 60_000 } }, async () => undefined);
    const queue = (await service([remind])).require("queue");
    const [id] = (await queue.enqueue(remind.job({}, { unique: { key: "inv-1" } }))).inserted;
    expect((await queue.backend.getJob({ id: id! }))?.job.unique).toEqual({ key: "inv-1", periodMs: 60_000, states: null });
    const own = remind.job({}, { unique: { key: "inv-2", states: ["ready", "running", "completed"] } });
    await queue.enqueue(own);
    expect((await queue.backend.getJob({ id: own.id }))?.job.unique).toEqual({ key: "inv-2", periodMs: null, states: ["ready", "running", "completed"] });
  });

  it("a plain enqueue answers every job as not a duplicate", async () => {
    const plain = defineTask("svc.plain", async () => undefined);
    const queue = (await service([plain])).require("queue");
    const result = await queue.enqueue([plain.job({}), plain.job({})]);
    expect(result.jobs.map((j) => j.duplicate)).toEqual([false, false]);
    expect(result.duplicates).toBeUndefined();
  });

  it("refuses to start a RabbitMQ queue without the database when a task is unique, naming the plugin", async () => {
    const unique = defineTask("svc.once", { unique: { key: () => "x" } }, async () => undefined);
    await expect(service([unique], 'backend = "rabbitmq"\nurl = "amqp://guest:guest@127.0.0.1:5672"')).rejects.toMatchObject({
      code: "CONFIG_PLUGIN_MISSING",
      hint: expect.stringContaining('"database"') as unknown,
    });
  });
});

describe("unique options are checked where they are written", () => {
  it("refuses a task's unique option that cannot work", () => {
    const handler = async () => undefined;
    expect(() => defineTask("svc.a", { unique: { periodMs: 0 } }, handler)).toThrow(/periodMs/);
    expect(() => defineTask("svc.a", { unique: { periodMs: 10, states: ["ready", "running"] } }, handler)).toThrow(/not both/);
    expect(() => defineTask("svc.a", { unique: { states: ["completed"] } }, handler)).toThrow(/ready and running/);
    expect(() => defineTask("svc.a", { unique: { key: "fixed" as never } }, handler)).toThrow(/function/);
  });

  it("refuses a job's key that is empty or too long", () => {
    expect(() => new Job({ task: "svc.a", unique: { key: "" } })).toThrow(/unique.key/);
    expect(() => new Job({ task: "svc.a", unique: { key: "k".repeat(513) } })).toThrow(/512/);
  });

  it("keeps the unique spec through the job's wire form (the outbox and RabbitMQ carry it)", () => {
    const job = new Job({ task: "svc.a", unique: { key: "k", periodMs: 5 } });
    expect(Job.fromJSON(JSON.parse(JSON.stringify(job.toJSON()))).unique).toEqual({ key: "k", periodMs: 5, states: null });
    expect(new Job({ task: "svc.a" }).toJSON()).not.toHaveProperty("unique");
  });
});

describe("the admin API's job view shows the unique key", () => {
  it("with its period or states, the key shown hashed so no payload value in it is shown", async () => {
    const { jobView } = await import("../../src/admin/views.js");
    const { createRedaction } = await import("../../src/admin/redact.js");
    const job = new Job({ task: "svc.a", payload: { card_token: "tok_4242424242", report: "q3" }, unique: { key: "q3:tok_4242424242" } });
    const view = jobView(
      { job: job.toJSON(), state: "ready", lockedBy: null, lockedUntil: null, diedAt: null },
      createRedaction({ fields: ["card_token"], defaults: false }),
    );
    expect(view.unique).toEqual({ key: expect.stringMatching(/^sha256:[0-9a-f]{12}$/), periodMs: null, states: ["ready", "running"] });
    expect(JSON.stringify(view.unique)).not.toContain("tok_4242424242");
    const plain = jobView({ job: new Job({ task: "svc.a" }).toJSON(), state: "ready", lockedBy: null, lockedUntil: null, diedAt: null }, createRedaction({ fields: [], defaults: false }));
    expect(plain.unique).toBeNull();
  });
});
