import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../create-jfast.js";
import { defineTask } from "../core/define-task.js";
import { Job } from "../core/job.js";
import type { QueueProvider } from "../queue/queue-provider.js";

/** [plugin.queue] prefetch reaches the workers a service creates; unset, the buffer starts at the concurrency. */
describe("[plugin.queue] prefetch", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function leasedWith(queueSection: string): Promise<number> {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-prefetch-"));
    await writeFile(path.join(dir, "jfast.toml"), `[service]\nname = "pre"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n${queueSection}`);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const hold = defineTask("pre.hold", () => blocked);
    const jfast: Jfast = await createJfast({ root: dir, env: {}, tasks: [hold], logger: { debug() {}, info() {}, warn() {}, error() {} } as never });
    await jfast.start();
    const queue = jfast.require<QueueProvider>("queue");
    await queue.enqueue(Array.from({ length: 6 }, () => new Job({ task: "pre.hold" })));
    const worker = jfast.createWorker({ concurrency: 1 });
    cleanups.push(async () => {
      release();
      await worker.stop({ graceMs: 1000 });
      await jfast.stop();
      await rm(dir, { recursive: true, force: true });
    });
    worker.start();
    for (let i = 0; i < 200 && worker.activeJobs.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    // Leased = running + buffered: what the worker took off the queue.
    return (await queue.depths()).running;
  }

  it("claims only for free slots with prefetch = 0", async () => {
    expect(await leasedWith("prefetch = 0\n")).toBe(1);
  });

  it("holds a fixed buffer with prefetch = N", async () => {
    expect(await leasedWith("prefetch = 3\n")).toBe(4);
  });

  it("starts an adaptive buffer at the concurrency when unset", async () => {
    expect(await leasedWith("")).toBe(2);
  });
});
