import { randomUUID } from "node:crypto";
import { createJfast, createLogger, Job } from "@jfast/runtime";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast, startJfast } from "./jfast-process.js";
import { AMQP_URL, dropRabbitQueue, REDIS_URL } from "./services.js";

// `jfast workers` as a separate process, reading the registry a `jfast worker` process (another one) writes to a
// Redis queue; each test on its own queue.

const TASKS = `import { task } from "@jfast/runtime";
export const nap = task("ops.nap", async (payload: { ms: number }) => { await new Promise((r) => setTimeout(r, payload.ms)); });
`;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface WorkerJson {
  id: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
  startedAt: string;
  heartbeatAt: string;
  running: string[];
  version: string;
  state: string;
}

async function listWorkers(root: string): Promise<WorkerJson[]> {
  const ran = await runJfast(["workers", "--json", "--root", root]);
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as WorkerJson[];
}

describe("jfast workers", () => {
  it("lists a running `jfast worker` with the job it runs, and no longer once it stopped", { timeout: 180_000 }, async () => {
    const queue = `jfast-test.cli-workers.${randomUUID().slice(0, 8)}`;
    cleanups.push(async () => {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`{${queue}}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    const service = await createServiceRoot({
      "jfast.toml": `[service]\nname = "ops"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\npoll_interval = 0.05\n`,
      "modules/ops/tasks.ts": TASKS,
    });
    cleanups.push(service.remove);
    const worker = startJfast(["worker", "--concurrency", "3", "--grace", "0", "--root", service.root], { timeoutMs: 150_000 });
    cleanups.push(async () => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    });

    const jfast = await createJfast({ root: service.root, background: false, logger: createLogger({ service: "ops", level: "silent" }) });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const job = new Job({ task: "ops.nap", payload: { ms: 120_000 } });
    await jfast.require("queue").enqueue(job);

    let listed: WorkerJson[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      listed = await listWorkers(service.root);
      if (listed[0]?.running.includes(job.id)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ pid: worker.child.pid, queues: ["default"], concurrency: 3, running: [job.id], state: "online" });
    expect(Object.keys(listed[0]!).slice(0, 8)).toEqual(["id", "host", "pid", "queues", "concurrency", "startedAt", "heartbeatAt", "running"]);
    expect(listed[0]!.version).toMatch(/^\d+\.\d+\.\d+/);
    // The id is the running job's lock holder.
    expect((await jfast.require("queue").backend.getJob({ id: job.id }))?.lockedBy).toBe(listed[0]!.id);

    const table = await runJfast(["workers", "--root", service.root]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(listed[0]!.id);
    expect(table.stdout).toContain("online");
    expect(table.stdout).toContain("1/3");

    // A clean stop (SIGTERM) leaves the registry at once.
    worker.child.kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);
    expect(await listWorkers(service.root)).toEqual([]);
  });

  it("says NOT_SUPPORTED on a RabbitMQ queue without the database, and why", { timeout: 120_000 }, async () => {
    const queue = `jfast-test.cli-workers.${randomUUID().slice(0, 8)}`;
    cleanups.push(() => dropRabbitQueue(queue));
    const service = await createServiceRoot({
      "jfast.toml": `[service]\nname = "ops"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n`,
      "modules/ops/tasks.ts": TASKS,
    });
    cleanups.push(service.remove);
    const ran = await runJfast(["workers", "--root", service.root]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("a RabbitMQ queue keeps no worker registry without the database plugin");
    expect(ran.stderr).toContain("jfast docs worker#the-worker-registry");
  });
});
