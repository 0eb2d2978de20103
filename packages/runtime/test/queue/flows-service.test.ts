import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineFlow } from "../../src/core/define-flow.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { dropSchema, eventually, PG_URL, silentLogger, uniqueSchema, withAdmin } from "../postgres/pg-test-env.js";

/**
 * Flows as a service starts them (docs/flows.md): `queue.flow` on its own, `outbox.flow` in the caller's
 * transaction (here a memory queue beside PostgreSQL: the plan is one outbox row the relay hands to the queue after
 * commit, and nothing of a rolled-back flow is ever seen), the refusals before anything is written, and a typed
 * flow's results read by the step that runs after.
 */
describe("flows in a service", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function app(tasks: TaskDefinition[]): Promise<{ jfast: Jfast; schema: string }> {
    const schema = uniqueSchema("flows");
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-flows-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    cleanups.push(() => dropSchema(schema));
    await writeFile(
      path.join(dir, "jfast.toml"),
      `[service]\nname = "flows"\n[plugins]\nenabled = ["database", "queue", "outbox"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n[plugin.queue]\nbackend = "memory"\npoll_interval = 1\n[plugin.outbox]\npoll_interval = 30\n`,
    );
    const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 4 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    return { jfast, schema };
  }

  const ran: string[] = [];
  const charge = defineTask("orders.charge", async (payload: { order: number }) => {
    ran.push(`charge:${payload.order}`);
    return { cents: payload.order * 100 };
  });
  const reserve = defineTask("orders.reserve", async (payload: { order: number }) => {
    ran.push(`reserve:${payload.order}`);
    return { sku: `sku-${payload.order}` };
  });
  const shipped: unknown[] = [];
  const fulfil = defineFlow("orders.fulfil", {
    charge: { task: charge },
    reserve: { task: reserve },
    ship: { task: defineTask("orders.ship", async (_payload: { order: number }, tools) => void shipped.push(fulfil.results(tools, "ship"))), after: ["charge", "reserve"] },
  });
  const ship = fulfil.steps.ship.task as TaskDefinition;

  it("starts a flow with queue.flow and passes the results on", async () => {
    const { jfast } = await app([charge, reserve, ship]);
    const queue = jfast.require("queue");
    const { flowId, jobIds } = await queue.flow(fulfil.create({ charge: { order: 7 }, reserve: { order: 7 }, ship: { order: 7 } }));
    expect(Object.keys(jobIds).sort()).toEqual(["charge", "reserve", "ship"]);
    await eventually("the flow completed", async () => (await queue.backend.getFlow({ id: flowId }))?.state === "completed");
    expect(shipped).toContainEqual({ charge: { cents: 700 }, reserve: { sku: "sku-7" } });
  });

  it("writes outbox.flow in the caller's transaction: a committed flow runs, a rolled-back one never exists", async () => {
    const { jfast, schema } = await app([charge, reserve, ship]);
    const database = jfast.require("database");
    const outbox = jfast.require("outbox");
    const queue = jfast.require("queue");
    const committed = await database.transaction((tx) => outbox.flow(tx, fulfil.create({ charge: { order: 11 }, reserve: { order: 11 }, ship: { order: 11 } })));
    const failure = await database
      .transaction(async (tx) => {
        await outbox.flow(tx, fulfil.create({ charge: { order: 12 }, reserve: { order: 12 }, ship: { order: 12 } }));
        throw new Error("the request failed after starting the flow");
      })
      .catch((e: Error) => e);
    expect(failure.message).toBe("the request failed after starting the flow");
    await eventually("the committed flow completed", async () => (await queue.backend.getFlow({ id: committed.flowId }))?.state === "completed", 10_000);
    expect(shipped).toContainEqual({ charge: { cents: 1100 }, reserve: { sku: "sku-11" } });
    expect(ran.filter((r) => r.endsWith(":12"))).toEqual([]);
    const rows = await withAdmin(async (c) => (await c.query(`SELECT id, kind, state FROM "${schema}".jfast_outbox`)).rows);
    expect(rows).toEqual([{ id: `flow:jfast.jobs:${committed.flowId}`, kind: "flow", state: "delivered" }]);
  });

  it("refuses a cycle, an unknown step, an unknown task and an empty flow before writing anything", async () => {
    const { jfast, schema } = await app([charge, reserve, ship]);
    const queue = jfast.require("queue");
    const outbox = jfast.require("outbox");
    const database = jfast.require("database");
    const job = () => charge.job({ order: 1 });
    await expect(queue.flow({ steps: { a: { job: job(), after: ["b"] }, b: { job: job(), after: ["a"] } } })).rejects.toMatchObject({ code: "FLOW_INVALID", message: expect.stringMatching(/cycle/) });
    await expect(queue.flow({ steps: { a: { job: job(), after: ["nope"] } } })).rejects.toMatchObject({ code: "FLOW_INVALID" });
    await expect(queue.flow({ steps: {} })).rejects.toMatchObject({ code: "FLOW_INVALID" });
    await expect(queue.flow({ steps: { a: new Job({ task: "orders.unknown" }) } })).rejects.toMatchObject({ code: "TASK_UNKNOWN" });
    await expect(database.transaction((tx) => outbox.flow(tx, { steps: { a: { job: job(), after: ["a"] } } }))).rejects.toMatchObject({ code: "FLOW_INVALID" });
    expect((await queue.backend.listFlows({ limit: 10 })).rows).toEqual([]);
    const rows = await withAdmin(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${schema}".jfast_outbox`)).rows[0].n);
    expect(rows).toBe(0);
  });

  it("runs a batch's callback with its counts", async () => {
    const counts: unknown[] = [];
    const done = defineTask("orders.batch_done", async (_payload: object, tools) => void counts.push(tools.batch));
    const { jfast } = await app([charge, done]);
    const queue = jfast.require("queue");
    const { batchId, jobIds, onCompleteId } = await queue.batch([charge.job({ order: 1 }), charge.job({ order: 2 })], { onComplete: done.job({}) });
    expect(jobIds).toHaveLength(2);
    expect(onCompleteId).not.toBeNull();
    await eventually("the callback ran", async () => counts.length === 1);
    expect(counts).toEqual([{ id: batchId, total: 2, completed: 2, dead: 0 }]);
  });
});
