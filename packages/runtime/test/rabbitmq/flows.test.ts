import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createJfast } from "../../src/create-jfast.js";
import { defineFlow } from "../../src/core/define-flow.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createLogger } from "../../src/observability/logger.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { flowPlanToJSON, planFlow } from "../../src/core/flow.js";
import type { FlowStore } from "../../src/core/flow-store.js";
import type { Job } from "../../src/core/job.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { createSqlCancelStore } from "../../src/queue/cancel-stores.js";
import { createSqlFlowStore } from "../../src/queue/flow-stores.js";
import { eventually, makeJob, sleep } from "../conformance/harness.js";
import { dropSchema, openTestDatabase, PG_URL, uniqueSchema } from "../postgres/pg-test-env.js";
import { AMQP_URL, dropQueue, openBackend, uniqueQueue } from "./rabbitmq-test-env.js";

/**
 * Flows on RabbitMQ with the service's database (docs/rabbitmq.md#flows), where a process dies between the steps
 * of an outcome: after the commit and before the parent's ack (the redelivered parent publishes the children its
 * outcome made ready, and is not counted again), and after the commit and before the publish (the sweep).
 */
describe("rabbitmq flows: a process that dies between commit, publish and ack", () => {
  let queue: string;
  let schema: string;
  let database: DatabaseProvider;
  let store: FlowStore;
  const opened: RabbitMqBackend[] = [];
  const open = async (options: { flowSweepMs?: number } = {}) => {
    const backend = await openBackend(queue, { flows: store, cancellations: createSqlCancelStore({ db: database.sql, queue }), ...options });
    opened.push(backend);
    return backend;
  };

  beforeEach(async () => {
    queue = uniqueQueue("flows");
    schema = uniqueSchema("rmqflows");
    database = await openTestDatabase({ schema });
    store = createSqlFlowStore({ db: database.sql, queue });
  });
  afterEach(async () => {
    for (const backend of opened.splice(0)) await backend.close();
    await dropQueue(queue);
    await database.close();
    await dropSchema(schema);
  });

  async function claimAll(backend: RabbitMqBackend, workerId: string, until: (jobs: Job[]) => boolean): Promise<Job[]> {
    const claimed: Job[] = [];
    await eventually("the claims", async () => {
      claimed.push(...(await backend.claim({ workerId, limit: 10, leaseMs: 30_000 })));
      return until(claimed);
    });
    return claimed;
  }

  it("a completion committed and never acked is redelivered: counted once, and its ready children published", async () => {
    const first = await open();
    const flow = planFlow({
      steps: {
        a: makeJob({ task: "step", payload: { step: "a" } }),
        b: makeJob({ task: "step", payload: { step: "b" } }),
        c: { job: makeJob({ task: "step", payload: { step: "c" } }), after: ["a", "b"] },
      },
    });
    expect(await first.enqueueFlow({ flow })).toEqual({ created: true });
    const [a, b, c] = flow.steps.map((s) => s.job.id) as [string, string, string];
    const claimed = await claimAll(first, "w1", (jobs) => jobs.some((j) => j.id === a) && jobs.some((j) => j.id === b));
    await first.complete({ workerId: "w1", job: claimed.find((j) => j.id === b)! });
    // a's completion commits (c is made ready), and its process dies before it publishes c or acks a.
    const jobA = claimed.find((j) => j.id === a)!;
    const written = await store.complete({ job: jobA.toJSON(), result: { value: "from a" }, spawn: undefined, leaseMs: 600_000 });
    expect(written.ready.map((j) => j.id)).toEqual([c]);
    await first.close();

    const second = await open();
    const seen: Job[] = [];
    await eventually("c arrived", async () => {
      for (const job of await second.claim({ workerId: "w2", limit: 10, leaseMs: 30_000 })) {
        seen.push(job);
        await second.complete({ workerId: "w2", job, result: { value: job.id } });
      }
      return seen.some((j) => j.id === c);
    });
    await sleep(300);
    seen.push(...(await second.claim({ workerId: "w2", limit: 10, leaseMs: 30_000 })));
    // The redelivered a was not handed out again, and c came once.
    expect(seen.map((j) => j.id)).toEqual([c]);
    expect(seen[0]!.flow).toMatchObject({ step: "c", after: { a, b } });
    const detail = (await second.getFlow({ id: flow.id }))!;
    expect(detail).toMatchObject({ state: "completed", total: 3, completed: 3, dead: 0 });
    expect(detail.steps.a).toMatchObject({ state: "completed", result: "from a", attempts: 1 });
    expect((await second.parentOutcomes({ jobIds: [a] })).get(a)).toEqual({ state: "completed", result: "from a" });
  });

  it("a step whose worker was lost on its last attempt dies once: its run-anyway child runs, the flow fails", async () => {
    const first = await open();
    const flow = planFlow({
      steps: {
        a: makeJob({ task: "step", payload: { step: "a" }, maxAttempts: 1 }),
        cleanup: { job: makeJob({ task: "step", payload: { step: "cleanup" } }), after: ["a"], onParentFailure: "run" },
        next: { job: makeJob({ task: "step", payload: { step: "next" } }), after: ["a"] },
      },
    });
    await first.enqueueFlow({ flow });
    const [a, cleanup] = flow.steps.map((s) => s.job.id) as [string, string];
    await claimAll(first, "w1", (jobs) => jobs.some((j) => j.id === a));
    // The process holding a dies: the broker delivers a again, its only attempt spent.
    await first.close();

    const second = await open();
    const seen = await claimAll(second, "w2", (jobs) => jobs.length > 0);
    expect(seen.map((j) => j.id)).toEqual([cleanup]);
    await sleep(300);
    expect(await second.claim({ workerId: "w2", limit: 10, leaseMs: 30_000 })).toEqual([]);
    const detail = (await second.getFlow({ id: flow.id }))!;
    expect(detail).toMatchObject({ state: "failed", dead: 1, completed: 0 });
    expect(detail.steps.a).toMatchObject({ state: "dead", error: { class: "WorkerLost" } });
    expect(detail.steps.next!.state).toBe("waiting");
    expect((await second.listDead({ limit: 10 })).map((d) => d.job.id)).toEqual([a]);
  });

  it("a step cancelled by id is never made ready, and reads cancelled", async () => {
    const backend = await open();
    const flow = planFlow({ steps: { a: makeJob({ task: "step", payload: { step: "a" } }), b: { job: makeJob({ task: "step", payload: { step: "b" } }), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const [a, b] = flow.steps.map((s) => s.job.id) as [string, string];
    expect(await backend.cancel({ id: b })).toEqual({ cancelled: true, state: "cancelled" });
    expect((await backend.getJob({ id: b }))?.state).toBe("cancelled");
    const [claimed] = await claimAll(backend, "w", (jobs) => jobs.length > 0);
    expect(claimed!.id).toBe(a);
    await backend.complete({ workerId: "w", job: claimed! });
    await sleep(300);
    expect(await backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 })).toEqual([]);
    expect((await backend.getFlow({ id: flow.id }))?.steps.b?.state).toBe("cancelled");
  });

  it("retention of completed jobs prunes finished flows with their steps, and keeps a failed one", async () => {
    const backend = await open();
    const done = planFlow({ steps: { a: makeJob({ task: "step", payload: { step: "a" } }), b: { job: makeJob({ task: "step", payload: { step: "b" } }), after: ["a"] } } });
    const failing = planFlow({ steps: { x: makeJob({ task: "step", payload: { step: "x" } }) } });
    const newer = planFlow({ steps: { y: makeJob({ task: "step", payload: { step: "y" } }) } });
    for (const flow of [done, failing, newer]) await backend.enqueueFlow({ flow });
    const x = failing.steps[0]!.job.id;
    await eventually("every step ran", async () => {
      for (const job of await backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 })) {
        if (job.id === x) await backend.kill({ workerId: "w", job, error: { attempt: 1, at: new Date().toISOString(), class: "Error", message: "no" } });
        else await backend.complete({ workerId: "w", job });
      }
      return (await backend.getFlow({ id: done.id }))?.state === "completed" && (await backend.getFlow({ id: newer.id }))?.state === "completed";
    });
    expect((await backend.getFlow({ id: failing.id }))?.state).toBe("failed");
    // The newest finished flow is kept by a count of one; then an age prunes the rest, the failed flow aside.
    expect(await backend.prune({ state: "completed", select: { keepNewest: 1 }, limit: 100 })).toBe(2);
    expect(await backend.getFlow({ id: done.id })).toBeNull();
    expect(await backend.getJob({ id: done.steps[0]!.job.id }).catch((error: { code?: string }) => error.code)).toBe("NOT_SUPPORTED");
    expect(await backend.prune({ state: "completed", select: { before: new Date(Date.now() + 60_000) }, limit: 100 })).toBe(1);
    expect(await backend.getFlow({ id: newer.id })).toBeNull();
    expect((await backend.getFlow({ id: failing.id }))?.state).toBe("failed");
  });

  it("jfast keys rotate rewrites the steps still in the database, not those in the broker", async () => {
    const backend = await open();
    const flow = planFlow({ steps: { a: makeJob({ task: "step", payload: { step: "a" } }), b: { job: makeJob({ task: "step", payload: { step: "b" } }), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const [a, b] = flow.steps.map((s) => s.job.id) as [string, string];
    const result = await backend.rewriteStored({ rewrite: (parts) => ({ ...parts, payload: { ...(parts.payload as object), rotated: true } }) });
    expect(result).toMatchObject({ waiting: 1, dead: 0, skipped: [] });
    expect(result.waitingNotSupported).toMatch(/only flow steps not yet published/);
    expect((await backend.getJob({ id: b }))?.job.payload).toEqual({ step: "b", rotated: true });
    const [claimedA] = await claimAll(backend, "w", (jobs) => jobs.length > 0);
    expect(claimedA).toMatchObject({ id: a, payload: { step: "a" } });
    await backend.complete({ workerId: "w", job: claimedA! });
    const [claimedB] = await claimAll(backend, "w", (jobs) => jobs.length > 0);
    expect(claimedB).toMatchObject({ id: b, payload: { step: "b", rotated: true } });
  });

  it("a ready step its maker never published is published by the sweep", async () => {
    const flow = planFlow({ steps: { root: makeJob({ task: "step", payload: { step: "root" } }), next: { job: makeJob({ task: "step", payload: { step: "next" } }), after: ["root"] } } });
    // The flow is committed and its process dies before it publishes the root: no lease left to wait out.
    const { created, ready } = await store.create({ flow: flowPlanToJSON(flow), leaseMs: 0 });
    expect({ created, ready: ready.map((j) => j.id) }).toEqual({ created: true, ready: [flow.steps[0]!.job.id] });
    const backend = await open({ flowSweepMs: 200 });
    const [root] = await claimAll(backend, "w", (jobs) => jobs.length > 0);
    expect(root!.id).toBe(flow.steps[0]!.job.id);
    await backend.complete({ workerId: "w", job: root! });
    const [next] = await claimAll(backend, "w", (jobs) => jobs.length > 0);
    expect(next!.id).toBe(flow.steps[1]!.job.id);
  });

  it("a completion the database could not take is kept under its lease: written again, the step is not run twice", async () => {
    // The store's only pooled connection is held, so the completion waits for one and fails (DATABASE_UNAVAILABLE).
    const tight = await openTestDatabase({ schema, poolSize: 1 });
    try {
      const backend = await openBackend(queue, { flows: createSqlFlowStore({ db: tight.sql, queue }) });
      opened.push(backend);
      const flow = planFlow({ steps: { a: makeJob({ task: "step", payload: { step: "a" } }), b: { job: makeJob({ task: "step", payload: { step: "b" } }), after: ["a"] } } });
      await backend.enqueueFlow({ flow });
      const [a, b] = flow.steps.map((s) => s.job.id) as [string, string];
      const [claimed] = await claimAll(backend, "w", (jobs) => jobs.length > 0);
      expect(claimed!.id).toBe(a);
      let release!: () => void;
      const held = tight.sql.transaction(() => new Promise<void>((resolve) => (release = resolve)));
      try {
        await expect(backend.complete({ workerId: "w", job: claimed!, result: { value: "from a" } })).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
      } finally {
        release();
        await held;
      }
      // The worker writes the outcome again (worker/write-outcome-again.ts): the delivery is still its own.
      await backend.complete({ workerId: "w", job: claimed!, result: { value: "from a" } });
      const after = await claimAll(backend, "w", (jobs) => jobs.length > 0);
      expect(after.map((j) => j.id)).toEqual([b]);
      expect((await backend.getFlow({ id: flow.id }))?.steps.a).toMatchObject({ state: "completed", result: "from a", attempts: 1 });
      // a never comes back: nothing more is delivered.
      await sleep(500);
      expect(await backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 })).toEqual([]);
    } finally {
      for (const backend of opened.splice(0)) await backend.close();
      await tight.close();
    }
  }, 60_000);
});

describe("rabbitmq flows without the database", () => {
  const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");
  const roots: string[] = [];
  afterEach(async () => {
    for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
  });

  it("refuses queue.flow and queue.batch with NOT_SUPPORTED naming the plugin to enable", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-rabbitmq-flows-"));
    roots.push(root);
    const queueName = uniqueQueue("noflows");
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "shop"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queueName}"\n`);
    const charge = defineTask("shop.charge", async () => 1);
    const app = await createJfast({ root, env: {}, tasks: [charge], logger: createLogger({ service: "shop", level: "silent" }) });
    await app.start();
    try {
      const queue = app.require("queue");
      const refusal = { code: "NOT_SUPPORTED", hint: 'add "database" to [plugins] enabled: RabbitMQ keeps flows in the service\'s database' };
      await expect(queue.flow({ steps: { a: charge.job({}) } })).rejects.toMatchObject(refusal);
      await expect(queue.batch([charge.job({})])).rejects.toMatchObject(refusal);
      await expect(queue.backend.getFlow({ id: "x" })).rejects.toMatchObject(refusal);
    } finally {
      await app.stop();
      await dropQueue(queueName);
    }
  });

  it("refuses to start a service that declares a flow, naming the plugin to enable", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-rabbitmq-flows-"));
    roots.push(root);
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "shop"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${uniqueQueue("flows")}"\n`);
    await mkdir(path.join(root, "modules/shop"), { recursive: true });
    await writeFile(
      path.join(root, "modules/shop/tasks.ts"),
      `import { task } from ${JSON.stringify(path.join(SRC, "core/define-task.ts"))};
import { defineFlow } from ${JSON.stringify(path.join(SRC, "core/define-flow.ts"))};
export const charge = task("shop.charge", async () => 1);
export const ship = task("shop.ship", async () => undefined);
export const fulfil = defineFlow("shop.fulfil", { charge: { task: charge }, ship: { task: ship, after: ["charge"] } });
`,
    );
    const app = await createJfast({ root, env: {}, logger: createLogger({ service: "shop", level: "silent" }) });
    await expect(app.start()).rejects.toMatchObject({
      code: "CONFIG_PLUGIN_MISSING",
      message: expect.stringContaining('flow "shop.fulfil"') as unknown,
      hint: expect.stringContaining('add "database" to [plugins] enabled') as unknown,
    });
  });
});

describe("rabbitmq flows in a service with the database", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("runs queue.flow, and outbox.flow through the relay once its transaction commits", async () => {
    const queueName = uniqueQueue("flowsvc");
    const schema = uniqueSchema("rmqflowsvc");
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-rabbitmq-flows-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }), () => dropSchema(schema), () => dropQueue(queueName));
    await writeFile(
      path.join(dir, "jfast.toml"),
      `[service]\nname = "shop"\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queueName}"\n[plugin.outbox]\npoll_interval = 0.2\n`,
    );
    const shipped: unknown[] = [];
    const charge = defineTask("shop.charge", async (payload: { order: number }) => ({ cents: payload.order * 100 }));
    const fulfil = defineFlow("shop.fulfil", {
      charge: { task: charge },
      ship: { task: defineTask("shop.ship", async (_payload: { order: number }, tools) => void shipped.push(fulfil.results(tools, "ship"))), after: ["charge"] },
    });
    const jfast = await createJfast({ root: dir, env: {}, logger: createLogger({ service: "shop", level: "silent" }), tasks: [charge, fulfil.steps.ship.task as TaskDefinition] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 4 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));

    const queue = jfast.require("queue");
    expect(queue.backend.capabilities.flows).toBe(true);
    const started = await queue.flow(fulfil.create({ charge: { order: 3 }, ship: { order: 3 } }));
    await eventually("the flow completed", async () => (await queue.backend.getFlow({ id: started.flowId }))?.state === "completed");
    const committed = await jfast.require("database").transaction((tx) => jfast.require("outbox").flow(tx, fulfil.create({ charge: { order: 4 }, ship: { order: 4 } })));
    await eventually("the outbox flow completed", async () => (await queue.backend.getFlow({ id: committed.flowId }))?.state === "completed");
    expect(shipped).toEqual([{ charge: { cents: 300 } }, { charge: { cents: 400 } }]);
  });
});
