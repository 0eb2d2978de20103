import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import type { TaskDefinition } from "../../src/core/task.js";

/** A task's limits declared through createJfast: refused where nothing can count them, enforced where something can. */
describe("task limits in a service", () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function service(tasks: TaskDefinition[], queueToml: string): Promise<Jfast> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-limits-"));
    closers.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "svc"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\n${queueToml}\n`);
    const jfast = await createJfast({ root, env: {}, tasks, logger: createLogger({ service: "svc", level: "silent" }) });
    await jfast.start();
    closers.push(() => jfast.stop());
    return jfast;
  }

  it("refuses to start a RabbitMQ queue without the database when a task has a limit, naming what to enable", async () => {
    const limited = defineTask("svc.charge", { concurrency: 5 }, async () => undefined);
    await expect(service([limited], 'backend = "rabbitmq"\nurl = "amqp://guest:guest@127.0.0.1:5672"')).rejects.toMatchObject({
      code: "CONFIG_PLUGIN_MISSING",
      hint: expect.stringContaining('enabled = ["database", "queue", ...]'),
      docs: "jfast docs rabbitmq#task-limits",
    });
  });

  it("declares its limits on the memory queue: a second job of a task capped at one waits", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const limited = defineTask("svc.capped", { concurrency: 1 }, async () => held);
    const jfast = await service([limited], 'backend = "memory"');
    const queue = jfast.require("queue");
    await queue.enqueue([limited.job({}), limited.job({})]);
    const claimed = await queue.backend.claim({ workerId: "w", limit: 5, leaseMs: 30_000 });
    expect(claimed).toHaveLength(1);
    release();
  });
});
