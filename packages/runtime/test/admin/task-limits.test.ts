import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { call, eventually, QUEUE_TUNING, startAdminApp, VIEWER } from "./admin-harness.js";

describe("admin API: the limit a waiting job waits on", () => {
  it("jobs.get shows a task's limits, and what a ready job over them waits on", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const limited = defineTask("billing.limited", { concurrency: 1, rateLimit: { max: 100, perMs: 1000 } }, async () => held);
    const app = await startAdminApp({
      setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} }),
      tasks: [limited],
    });
    try {
      const [first, second] = [new Job({ task: "billing.limited", payload: { n: 1 } }), new Job({ task: "billing.limited", payload: { n: 2 } })];
      await app.jfast.require("queue").enqueue([first!, second!]);
      await eventually("one job running", async () => (await app.backend.depths()).running === 1);
      const waiting = (await app.backend.getJob({ id: first!.id }))?.state === "running" ? second! : first!;
      const { data } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: waiting.id } });
      expect(data.job.limit).toEqual({
        concurrency: 1,
        rateLimit: { max: 100, perMs: 1000 },
        waitsOn: "concurrency 1 of billing.limited: 1 running",
      });
      release();
    } finally {
      release();
      await app.close();
    }
  });
});
