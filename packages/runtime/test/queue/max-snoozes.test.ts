import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { snooze } from "../../src/core/outcome.js";
import { createLogger } from "../../src/observability/logger.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import type { AppWorker as Worker } from "../../src/worker/worker-group.js";

/** `[plugin.queue] max_snoozes` reaches the worker a service builds, and queue.cancel reaches the backend. */
describe("a service's snooze limit and queue.cancel", () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function service(toml: string, tasks: ReturnType<typeof defineTask>[]): Promise<{ jfast: Jfast; worker: Worker }> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-snooze-"));
    closers.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "svc"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "memory"\npoll_interval = 0.05\n${toml}`);
    const jfast = await createJfast({ root, env: {}, tasks, logger: createLogger({ service: "svc", level: "silent" }) });
    await jfast.start();
    closers.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 2 });
    worker.start();
    closers.push(() => worker.stop({ graceMs: 0 }));
    return { jfast, worker };
  }

  it("dead-letters a job past [plugin.queue] max_snoozes", async () => {
    let runs = 0;
    const t = defineTask("svc.wait", async () => {
      runs++;
      return snooze(5);
    });
    const { jfast } = await service("max_snoozes = 1\n", [t]);
    const queue = jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "svc.wait" });
    await queue.enqueue(job);
    const deadline = Date.now() + 10_000;
    while ((await queue.backend.getJob({ id: job.id }))?.state !== "dead" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const info = await queue.backend.getJob({ id: job.id });
    expect(info?.state).toBe("dead");
    expect(runs).toBe(2);
    expect(info?.job.errors.at(-1)).toMatchObject({ class: "SnoozeLimit", reason: "too many snoozes" });
  });

  it("refuses a negative max_snoozes, naming the key", async () => {
    await expect(service("max_snoozes = -1\n", [])).rejects.toThrow(/max_snoozes/);
  });

  it("queue.cancel cancels a delayed job through the provider", async () => {
    const { jfast } = await service("", [defineTask("svc.later", async () => undefined)]);
    const queue = jfast.require<QueueProvider>("queue");
    const job = new Job({ task: "svc.later", delayMs: 60_000 });
    await queue.enqueue(job);
    expect(await queue.cancel(job.id)).toEqual({ cancelled: true, state: "cancelled" });
    expect((await queue.backend.getJob({ id: job.id }))?.state).toBe("cancelled");
  });
});
