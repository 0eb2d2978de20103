import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { silentLogger } from "../postgres/pg-test-env.js";
import { scrape, value } from "./prometheus.js";

const ok = defineTask("work.ok", async () => undefined);
const broken = defineTask("work.broken", { maxAttempts: 1 }, async () => {
  throw new Error("always fails");
});

/** The pruner's work in /metrics (docs/queues.md#retention): what it deleted per state, and when it last ran. */
describe("GET /metrics: the pruner", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("counts the completed jobs past the newest 2 and the dead letters it prunes, by queue and state", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-pruner-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const toml = [
      `[service]\nname = "pruned"\nenvironment = "development"`,
      `[plugins]\nenabled = ["queue"]`,
      `[plugin.queue]\nbackend = "memory"\nkeep_completed = 2\nkeep_dead = false\nprune_interval = "1s"`,
    ].join("\n");
    await writeFile(path.join(dir, "jfast.toml"), toml);
    const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: [ok, broken] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const queue = jfast.require<QueueProvider>("queue");
    await queue.enqueue([
      ...Array.from({ length: 5 }, (_, i) => new Job({ task: "work.ok", payload: { i } })),
      ...Array.from({ length: 2 }, (_, i) => new Job({ task: "work.broken", payload: { i } })),
    ]);
    const worker = jfast.createWorker({ concurrency: 2 });
    worker.start();
    const deadline = Date.now() + 15_000;
    let samples = await scrape(jfast);
    while (
      (value(samples, "jfast_pruned_jobs_total", { state: "completed" }) !== 3 || value(samples, "jfast_pruned_jobs_total", { state: "dead" }) !== 2) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 100));
      samples = await scrape(jfast);
    }
    await worker.stop({ graceMs: 1000 });
    expect(value(samples, "jfast_pruned_jobs_total", { queue: "jfast.jobs", state: "completed", service: "pruned" })).toBe(3);
    expect(value(samples, "jfast_pruned_jobs_total", { queue: "jfast.jobs", state: "dead" })).toBe(2);
    expect(value(samples, "jfast_pruned_jobs_total", { queue: "jfast.jobs", state: "cancelled" })).toBe(0);
    const lastRun = value(samples, "jfast_pruner_last_run_timestamp_seconds", { queue: "jfast.jobs" });
    expect(lastRun).toBeGreaterThan(Date.now() / 1000 - 15);
    expect((await queue.depths()).dead).toBe(0);
  });
});
