import { afterEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { AMQP_URL, dropQueue as dropRabbitQueue, uniqueQueue as uniqueRabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

/** Holds every billing.hold job until released (per test). */
let release: () => void = () => {};
let gate = Promise.resolve();
const hold = defineTask("billing.hold", async () => gate);

const SETUPS: { name: string; setup: () => Promise<AdminBackendSetup> }[] = [
  {
    name: "memory",
    setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} }),
  },
  {
    name: "postgres",
    setup: async () => {
      const schema = uniqueSchema("admin_workers");
      return {
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      };
    },
  },
];

describe("admin workers.list", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    release();
    await app?.close();
    app = null;
  });

  for (const { name, setup } of SETUPS) {
    it(`${name}: lists the service's worker online with the job it runs, its task and where it runs`, async () => {
      gate = new Promise<void>((resolve) => (release = resolve));
      app = await startAdminApp({ setup, tasks: [hold] });
      const job = new Job({ task: "billing.hold", payload: {}, tenantId: "acme" });
      await app.jfast.require("queue").enqueue(job);
      const view = await eventually("the job listed under its worker", async () => {
        const answer = await call(app!.jfast, "workers.list", { token: VIEWER });
        return answer.data?.workers?.[0]?.running?.includes(job.id) ? answer.data : null;
      });
      expect(view).toMatchObject({ enabled: true, supported: true, reason: null, online: 1, gone: 0, goneAfterBeats: 3 });
      const [worker] = view.workers;
      expect(worker).toMatchObject({ state: "online", pid: process.pid, queues: ["default"], concurrency: 4, running: [job.id] });
      expect(worker.jobs).toEqual([expect.objectContaining({ id: job.id, queue: "default", task: "billing.hold", tenantId: "acme" })]);
      expect(Date.parse(worker.jobs[0].startedAt)).toBeGreaterThanOrEqual(Date.parse(worker.startedAt));
      // The worker's id is the running job's lock holder.
      const shown = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } });
      expect(shown.data.job.lockedBy).toBe(worker.id);
      // Without the jobs: the count the Overview shows, no job read.
      const count = await call(app.jfast, "workers.list", { token: VIEWER, input: { jobs: false } });
      expect(count.data.workers[0].jobs).toEqual([expect.objectContaining({ id: job.id, task: null })]);
    });
  }

  it("shows a process running two named queues as one worker, with both queues and their slots added up", async () => {
    const schema = uniqueSchema("admin_workers_named");
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}\n[queues.media]\nconcurrency = 1\n`,
        cleanup: () => dropSchema(schema),
      }),
    });
    const view = await eventually("the worker registered on both queues", async () => {
      const answer = await call(app!.jfast, "workers.list", { token: VIEWER });
      return answer.data?.workers?.[0]?.queues?.length === 2 ? answer.data : null;
    });
    expect(view.workers).toHaveLength(1);
    expect(view.workers[0]).toMatchObject({ state: "online", queues: ["default", "media"], concurrency: 5, running: [] });
  });

  it("rabbitmq without the database: not supported, with the reason and the fix", async () => {
    const queue = uniqueRabbitQueue("admin-workers");
    app = await startAdminApp({
      setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRabbitQueue(queue) }),
    });
    const answer = await call(app.jfast, "workers.list", { token: VIEWER });
    expect(answer.status).toBe(200);
    expect(answer.data).toMatchObject({ enabled: true, supported: false, workers: [], online: 0 });
    expect(answer.data.reason).toMatch(/database/);
  });
});
