import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp } from "./admin-harness.js";

/** jobs.get shows a completed job's result (docs/tasks.md#results), redacted as its payload is, or why it has none. */
describe("admin jobs.get: results", () => {
  let app: AdminApp;
  beforeEach(async () => {
    const quote = defineTask("billing.quote", async (payload: { lines: number }) =>
      payload.lines > 100 ? { text: "x".repeat(200) } : { total: 12.5, card_number: "4242424242424242" },
    );
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["queue"],
        sections: `[plugin.queue]\nbackend = "memory"\nmax_result_bytes = 100\n${QUEUE_TUNING}`,
        backend: createMemoryBackend(),
        cleanup: async () => {},
      }),
      tasks: [quote],
    });
  });
  afterEach(async () => {
    await app.close();
  });

  async function completed(lines: number): Promise<Record<string, unknown>> {
    const job = new Job({ task: "billing.quote", payload: { lines } });
    await app.jfast.require("queue").enqueue([job]);
    return eventually("the job completed", async () => {
      const { data } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: job.id } });
      return data.job?.state === "completed" ? (data.job as Record<string, unknown>) : undefined;
    });
  }

  it("shows the result with the payload's redaction", async () => {
    const job = await completed(2);
    expect(job.result).toEqual({ total: 12.5, card_number: "[redacted]" });
    expect(job.resultOmitted).toBeUndefined();
  });

  it("says why a result too large was not stored", async () => {
    const job = await completed(200);
    expect(job.result).toBeUndefined();
    expect(job.resultOmitted).toMatch(/max_result_bytes \(100\)/);
  });
});
