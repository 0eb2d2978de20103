import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { AMQP_URL, dropQueue, uniqueQueue } from "./rabbitmq-test-env.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("rabbitmq: built from jfast.toml", () => {
  it("takes AMQP_URL over the file, declares the queue at start, runs a delayed job and reports its depths", async () => {
    const queue = uniqueQueue("app");
    const root = await mkdtemp(path.join(tmpdir(), "jfast-rabbitmq-app-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }), () => dropQueue(queue));
    // The file's url points nowhere: the environment's AMQP_URL must win.
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "app"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "amqp://nobody:nothing@127.0.0.1:1"\nname = "${queue}"\n`,
    );
    const ran: Array<{ id: string; at: number }> = [];
    const probe = defineTask("app.probe", async (_p, { job }) => {
      ran.push({ id: job.id, at: Date.now() });
    });
    const jfast: Jfast = await createJfast({
      root,
      env: { AMQP_URL },
      tasks: [probe],
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    await jfast.start();
    cleanups.push(() => jfast.stop());

    const job = new Job({ task: "app.probe", delayMs: 800 });
    await jfast.require<QueueProvider>("queue").enqueue(job);
    const stats = (await (await jfast.fetch(new Request("http://app/queue/stats"))).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ backend: "rabbitmq", queue, depths: { ready: 0, scheduled: 1, delayed: 1, running: 0, dead: 0 } });

    jfast.createWorker({ concurrency: 2 }).start();
    const deadline = Date.now() + 15_000;
    while (ran.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(ran.map((r) => r.id)).toEqual([job.id]);
    expect(ran[0]!.at).toBeGreaterThanOrEqual(job.availableAt.getTime());
  });

  it("serves /metrics' queue depth as totals with an empty task label, never asking the broker for per-task counts", async () => {
    const queue = uniqueQueue("metrics");
    const root = await mkdtemp(path.join(tmpdir(), "jfast-rabbitmq-metrics-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }), () => dropQueue(queue));
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "app"\nenvironment = "development"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nname = "${queue}"\n`,
    );
    const later = defineTask("app.later", async () => {});
    const jfast: Jfast = await createJfast({ root, env: { AMQP_URL }, tasks: [later], logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const provider = jfast.require<QueueProvider>("queue");
    expect(provider.backend.capabilities.perTaskDepths).toBe(false);
    let asked = 0;
    const depthsByTask = provider.backend.depthsByTask.bind(provider.backend);
    provider.backend.depthsByTask = (params) => {
      asked++;
      return depthsByTask(params);
    };
    await provider.enqueue([new Job({ task: "app.later", delayMs: 60_000 }), new Job({ task: "app.later", delayMs: 60_000 })]);
    const text = await (await jfast.fetch(new Request("http://app/metrics"))).text();
    expect(text).toMatch(/jfast_queue_depth\{[^}]*task=""[^}]*state="scheduled"[^}]*\} 2/);
    expect(asked).toBe(0);
  });
});
