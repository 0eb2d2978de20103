import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { dropSchema, PG_URL, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";

/**
 * `[queues.<name>] fairness` (docs/flow-control.md#fairness-on-a-whole-queue): every task of the queue takes turns
 * by key unless it has a fairness or order of its own, on the memory and PostgreSQL queues.
 */
describe("fairness on a whole queue", () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function service(tasks: TaskDefinition[], toml: { backend: "memory" | "postgres" | "rabbitmq"; queues: string }): Promise<Jfast> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-fair-queue-"));
    closers.push(() => rm(root, { recursive: true, force: true }));
    let plugins = '["queue"]';
    let database = "";
    if (toml.backend === "postgres") {
      const schema = uniqueSchema("fairq");
      closers.push(() => dropSchema(schema));
      plugins = '["database", "queue"]';
      database = `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n`;
    }
    const url = toml.backend === "rabbitmq" ? 'url = "amqp://guest:guest@127.0.0.1:5672"\n' : "";
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "svc"\n\n[plugins]\nenabled = ${plugins}\n${database}\n[plugin.queue]\nbackend = "${toml.backend}"\n${url}\n${toml.queues}\n`,
    );
    const jfast = await createJfast({ root, env: {}, tasks, logger: silentLogger });
    closers.push(() => jfast.stop());
    await jfast.start();
    return jfast;
  }

  for (const backend of ["memory", "postgres"] as const) {
    it(`${backend}: a task with no fairness of its own takes turns by tenant, so tenant B's jobs start among A's backlog`, async () => {
      const plain = defineTask("svc.import_row", async () => undefined);
      const jfast = await service([plain], { backend, queues: '[queues.default]\nfairness = "tenant"' });
      const queue = jfast.require("queue");
      await queue.enqueue(Array.from({ length: 40 }, (_, i) => plain.job({ i }, { tenantId: "a" })));
      await queue.enqueue(Array.from({ length: 4 }, (_, i) => plain.job({ i }, { tenantId: "b" })));
      const started: string[] = [];
      for (let i = 0; i < 10; i++) for (const job of await queue.backend.claim({ workerId: "w", limit: 1, leaseMs: 60_000 })) started.push(job.tenantId!);
      // Turns: B's four start within the first ten claims, A's backlog of 40 notwithstanding.
      expect(started.filter((t) => t === "b")).toHaveLength(4);
      expect(started.slice(0, 8).filter((t) => t === "b").length).toBeGreaterThanOrEqual(3);
    });
  }

  it("takes the key from a payload field, keeps a task's own fairness and order, and refuses a payload without the field", async () => {
    const plain = defineTask("svc.export_page", async () => undefined);
    const own = defineTask("svc.own", { fairness: { key: (p: { region: string; customer?: { id: string } }) => p.region } }, async () => undefined);
    const ordered = defineTask("svc.ledger", { orderedBy: (p: { account: string; customer?: { id: string } }) => p.account }, async () => undefined);
    const keyed = defineTask("svc.sync", { concurrency: { key: (p: { shop: string; customer?: { id: string } }) => p.shop, limit: 2 } }, async () => undefined);
    const jfast = await service([plain, own, ordered, keyed], {
      backend: "memory",
      queues: '[queues.default]\nfairness = { key = "customer.id", weights = { acme = 2 } }',
    });
    const queue = jfast.require("queue");
    const registry = jfast.require("tasks");
    expect(registry.get("svc.export_page")!.options.fairness).toMatchObject({ weights: { acme: 2 } });
    expect(registry.get("svc.own")!.options.fairness).toBe(own.options.fairness);
    expect(registry.get("svc.ledger")!.options.fairness).toBeUndefined();
    expect(registry.get("svc.sync")!.options.fairness).toEqual({ weights: { acme: 2 } });
    // The declared task is left as it was.
    expect(plain.options.fairness).toBeUndefined();
    await queue.enqueue([
      plain.job({ customer: { id: "acme" } }),
      plain.job({ customer: { id: 42 } }),
      own.job({ region: "eu", customer: { id: "acme" } }),
      ordered.job({ account: "acc-1", customer: { id: "acme" } }),
      keyed.job({ shop: "s-1", customer: { id: "acme" } }),
    ]);
    const claimed = await queue.backend.claim({ workerId: "w", limit: 10, leaseMs: 60_000 });
    expect(claimed.map((j) => `${j.task}=${j.limitKey}`).sort()).toEqual(["svc.export_page=42", "svc.export_page=acme", "svc.ledger=acc-1", "svc.own=eu", "svc.sync=s-1"]);
    await expect(queue.enqueue(plain.job({ customerId: "acme" }))).rejects.toThrow(/payload's "customer.id".*missing.*flow-control#fairness-on-a-whole-queue/);
  });

  it("refuses a fairness that is not \"tenant\" or { key, weights }, naming the form and the page", async () => {
    await expect(service([], { backend: "memory", queues: '[queues.default]\nfairness = "customer"' })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringMatching(/\[queues\.default\] fairness.*"tenant".*flow-control#fairness-on-a-whole-queue/s),
    });
    await expect(service([], { backend: "memory", queues: '[queues.default]\nfairness = { weights = { acme = 0 } }' })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
  });

  it("refuses fairness on a RabbitMQ queue at start, naming what to change", async () => {
    const plain = defineTask("svc.plain", async () => undefined);
    await expect(service([plain], { backend: "rabbitmq", queues: '[queues.default]\nfairness = "tenant"' })).rejects.toMatchObject({
      code: "NOT_SUPPORTED",
      hint: expect.stringContaining("remove fairness from [queues.default]"),
      docs: "jfast docs flow-control#fairness-on-a-whole-queue",
    });
  });
});
