import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { Job } from "../core/job.js";
import { TaskRegistry } from "../core/registry.js";
import { createQueueProvider } from "./queue-provider.js";

function provider(foreignTasks?: Set<string>) {
  const backend = createMemoryBackend();
  const registry = new TaskRegistry();
  registry.task("invoice.send_email", () => {});
  registry.task("invoice.charge", () => {});
  return { backend, queue: createQueueProvider({ backend, name: "q", registry, defaultMaxAttempts: 3, ...(foreignTasks ? { foreignTasks } : {}) }) };
}

describe("enqueueing a task this service does not know", () => {
  it("is refused with TASK_UNKNOWN, as `jfast jobs enqueue` refuses it, naming the known tasks; nothing is stored", async () => {
    const { backend, queue } = provider();
    const refused = queue.enqueue([new Job({ task: "invoice.send_email" }), new Job({ task: "invoice.send_emial" })]);
    await expect(refused).rejects.toMatchObject({
      code: "TASK_UNKNOWN",
      message: expect.stringMatching(/^this service declares no task named "invoice\.send_emial"\n/),
      hint: expect.stringContaining("known tasks: invoice.charge, invoice.send_email"),
      docs: "jfast docs tasks#names",
    });
    expect((await backend.depths()).ready).toBe(0);
  });

  it("is accepted when contracts.toml declares it as another service's task", async () => {
    const { backend, queue } = provider(new Set(["shipment.create"]));
    await queue.enqueue(new Job({ task: "shipment.create", payload: { invoice_id: "inv_1" } }));
    expect((await backend.depths()).ready).toBe(1);
  });
});
