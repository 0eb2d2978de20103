import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { AMQP_URL, dropQueue as dropRabbitQueue, uniqueQueue as uniqueRabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { REDIS_URL, dropQueue as dropRedisQueue, uniqueQueue as uniqueRedisQueue } from "../redis/redis-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

/** Whether flow.flaky fails (per app: each test flips it to let a retried step complete). */
const flaky = { fails: true };

const stepTask = defineTask("flow.step", async (payload: { step: string }) => ({ from: payload.step, card_number: "4242424242424242" }));
const flakyTask = defineTask("flow.flaky", async (payload: { step: string; card_number: string }) => {
  if (flaky.fails) throw new PermanentError(`step ${payload.step} failed for card ${payload.card_number}`);
  return { from: payload.step };
});

const SETUPS: { name: string; audit: "memory" | "sql"; setup: () => Promise<AdminBackendSetup> }[] = [
  {
    name: "memory",
    audit: "memory",
    setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} }),
  },
  {
    name: "redis",
    audit: "memory",
    setup: async () => {
      const queue = uniqueRedisQueue("admin-flows");
      return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRedisQueue(queue) };
    },
  },
  {
    name: "postgres",
    audit: "sql",
    setup: async () => {
      const schema = uniqueSchema("admin_flows");
      return {
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      };
    },
  },
];

const step = (name: string, task = "flow.step", extra: Record<string, unknown> = {}) => new Job({ task, payload: { step: name, ...extra } });

for (const { name, audit, setup } of SETUPS) {
  describe(`${name}: admin flows`, () => {
    let app: AdminApp;
    beforeEach(async () => {
      flaky.fails = true;
      app = await startAdminApp({ setup, tasks: [stepTask, flakyTask] });
    });
    afterEach(async () => {
      await app.close();
    });

    /** charge → ship (fails until flaky.fails is off) → notify. */
    async function failedFlow(): Promise<{ flowId: string; jobIds: Record<string, string> }> {
      const created = await app.jfast.require("queue").flow({
        name: "order.fulfil",
        steps: {
          charge: step("charge"),
          ship: { job: step("ship", "flow.flaky", { card_number: "4111111111111111" }), after: ["charge"] },
          notify: { job: step("notify"), after: ["ship"] },
        },
      });
      await eventually("the flow failed", async () => (await app.backend.getFlow({ id: created.flowId }))?.state === "failed");
      return created;
    }

    it("lists flows by state and name, and shows each step redacted", async () => {
      const { flowId, jobIds } = await failedFlow();
      const list = await call(app.jfast, "flows.list", { token: VIEWER, input: { state: "failed" } });
      expect(list.status).toBe(200);
      expect(list.data).toMatchObject({ enabled: true, supported: true, nextCursor: null });
      expect(list.data.items).toEqual([expect.objectContaining({ id: flowId, name: "order.fulfil", state: "failed", total: 3, completed: 1, dead: 1, queue: "default" })]);
      expect((await call(app.jfast, "flows.list", { token: VIEWER, input: { state: "completed" } })).data.items).toEqual([]);
      expect((await call(app.jfast, "flows.list", { token: VIEWER, input: { name: "other" } })).data.items).toEqual([]);

      const { data } = await call(app.jfast, "flows.get", { token: VIEWER, input: { id: flowId } });
      expect(data.flow).toMatchObject({ id: flowId, state: "failed", queue: "default" });
      expect(data.flow.steps.charge).toMatchObject({ name: "charge", jobId: jobIds.charge, task: "flow.step", state: "completed", after: [], result: { from: "charge", card_number: "[redacted]" } });
      expect(data.flow.steps.ship).toMatchObject({ jobId: jobIds.ship, state: "dead", after: ["charge"], attempts: 1 });
      // The error quoted the step's hidden payload value: scrubbed as jobs.get scrubs it.
      expect(data.flow.steps.ship.error).toEqual({ class: "PermanentError", message: "step ship failed for card [redacted]" });
      expect(data.flow.steps.notify).toMatchObject({ state: "waiting", after: ["ship"] });
      expect((await call(app.jfast, "flows.get", { token: VIEWER, input: { id: "no-such-flow" } })).data).toMatchObject({ supported: true, flow: null });
    });

    it("pages through flows with the cursor", async () => {
      const queue = app.jfast.require("queue");
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await queue.flow({ steps: { only: new Job({ task: "flow.step", payload: { step: "only" }, delayMs: 60_000 }) } })).flowId);
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const { data } = await call(app.jfast, "flows.list", { token: VIEWER, input: { limit: 2, ...(after ? { after } : {}) } });
        seen.push(...data.items.map((f: { id: string }) => f.id));
        if (data.nextCursor === null) break;
        after = data.nextCursor;
      }
      expect(seen).toEqual([...ids].reverse());
      const bad = await call(app.jfast, "flows.list", { token: VIEWER, input: { after: "elsewhere:1" } });
      expect(bad.status).toBe(400);
    });

    it("retries a dead step, audited, and the flow completes; a step that is not dead is refused", async () => {
      const { flowId, jobIds } = await failedFlow();
      const waiting = await call(app.jfast, "flows.retryStep", { token: OPERATOR, input: { id: flowId, step: "notify" }, mutation: true });
      expect(waiting.error?.data.code).toBe("PRECONDITION_FAILED");
      expect(waiting.error?.message).toMatch(/step "notify" of flow .* is waiting, not dead/);
      const unknown = await call(app.jfast, "flows.retryStep", { token: OPERATOR, input: { id: flowId, step: "nope" }, mutation: true });
      expect(unknown.error?.data.code).toBe("NOT_FOUND");
      const viewer = await call(app.jfast, "flows.retryStep", { token: VIEWER, input: { id: flowId, step: "ship" }, mutation: true });
      expect(viewer.status).toBe(403);

      flaky.fails = false;
      const retried = await call(app.jfast, "flows.retryStep", { token: OPERATOR, input: { id: flowId, step: "ship" }, mutation: true });
      expect(retried.data).toEqual({ id: flowId, step: "ship", jobId: jobIds.ship, queue: "default" });
      await eventually("the flow completed", async () => (await app.backend.getFlow({ id: flowId }))?.state === "completed");

      const { data } = await call(app.jfast, "audit.list", { token: VIEWER });
      expect(data.store).toBe(audit);
      const entries = data.entries.filter((e: { action: string }) => e.action === "flows.retryStep");
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ actor: "alice", ids: [jobIds.ship], filter: { flow: flowId, step: "ship" }, outcome: { retried: 1 } });
    });

    it("cancels a flow's unfinished steps, audited; an unknown flow is NOT_FOUND", async () => {
      const { flowId, jobIds } = await app.jfast.require("queue").flow({
        steps: {
          later: new Job({ task: "flow.step", payload: { step: "later" }, delayMs: 60_000 }),
          after: { job: step("after"), after: ["later"] },
        },
      });
      const { status, data } = await call(app.jfast, "flows.cancel", { token: OPERATOR, input: { id: flowId }, mutation: true });
      expect(status).toBe(200);
      expect(data).toMatchObject({ id: flowId, queue: "default" });
      expect([...data.cancelled].sort()).toEqual([jobIds.later, jobIds.after].sort());
      const shown = await call(app.jfast, "flows.get", { token: VIEWER, input: { id: flowId } });
      expect(shown.data.flow.state).toBe("cancelled");
      expect(shown.data.flow.steps.later.state).toBe("cancelled");

      const missing = await call(app.jfast, "flows.cancel", { token: OPERATOR, input: { id: "no-such-flow" }, mutation: true });
      expect(missing.error?.data.code).toBe("NOT_FOUND");
      const entries = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries.filter((e: { action: string }) => e.action === "flows.cancel");
      expect(entries).toHaveLength(2);
      expect(entries.find((e: { filter: { flow: string } }) => e.filter.flow === flowId)).toMatchObject({ actor: "alice", count: 2, outcome: { cancelled: 2 } });
    });

    it("repairs in the service's process (the CLI's path) write the same audit entries", async () => {
      const { flowId } = await failedFlow();
      const repairs = await app.jfast.repairs("cli:ops");
      await expect(repairs.retryFlowStep({ id: flowId, step: "charge" })).rejects.toMatchObject({ code: "ADMIN_PRECONDITION_FAILED" });
      expect(await repairs.cancelFlow(flowId)).toMatchObject({ queue: "default" });
      expect(await repairs.cancelFlow("no-such-flow")).toBeNull();
      const entries = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries.filter((e: { action: string }) => e.action.startsWith("flows."));
      expect(entries.map((e: { actor: string; action: string }) => `${e.actor} ${e.action}`)).toEqual(["cli:ops flows.cancel", "cli:ops flows.cancel"]);
    });
  });
}

describe("rabbitmq: admin flows", () => {
  let app: AdminApp;
  beforeEach(async () => {
    app = await startAdminApp({
      setup: async () => {
        const queue = uniqueRabbitQueue("admin-flows");
        return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRabbitQueue(queue) };
      },
    });
  });
  afterEach(async () => {
    await app.close();
  });

  it("without the database plugin, says the views are not supported, and refuses the repairs with NOT_SUPPORTED", async () => {
    const list = await call(app.jfast, "flows.list", { token: VIEWER });
    expect(list.status).toBe(200);
    expect(list.data).toMatchObject({ enabled: true, supported: false, items: [], nextCursor: null });
    expect(list.data.reason).toMatch(/a rabbitmq queue keeps no flows/);
    expect((await call(app.jfast, "flows.get", { token: VIEWER, input: { id: "x" } })).data).toMatchObject({ supported: false, flow: null });
    const cancel = await call(app.jfast, "flows.cancel", { token: OPERATOR, input: { id: "x" }, mutation: true });
    expect(cancel.error?.data.code).toBe("METHOD_NOT_SUPPORTED");
    const repairs = await app.jfast.repairs("cli:ops");
    await expect(repairs.cancelFlow("x")).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
  });
});

describe("redis: admin flows across named queues", () => {
  let app: AdminApp;
  afterEach(async () => {
    await app?.close();
  });

  it("lists each named queue's flows in turn, finds a flow in its queue and cancels it there", async () => {
    const resize = defineTask("media.resize", { queue: "media" }, async () => ({ ok: true }));
    app = await startAdminApp({
      tasks: [stepTask, resize],
      setup: async () => {
        const queue = uniqueRedisQueue("admin-flowsq");
        return {
          plugins: ["queue"],
          sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}\n[queues.media]\nconcurrency = 1\n`,
          cleanup: async () => {
            await dropRedisQueue(queue);
            await dropRedisQueue(`${queue}:media`);
          },
        };
      },
    });
    const queue = app.jfast.require("queue");
    const later = (task: string) => new Job({ task, payload: { step: "x" }, delayMs: 60_000 });
    const inDefault = (await queue.flow({ steps: { a: later("flow.step") } })).flowId;
    const inMedia = [(await queue.flow({ steps: { a: later("media.resize") } })).flowId, (await queue.flow({ steps: { a: later("media.resize") } })).flowId];

    const first = await call(app.jfast, "flows.list", { token: VIEWER, input: { limit: 1 } });
    expect(first.data.items.map((f: { id: string; queue: string }) => [f.id, f.queue])).toEqual([[inDefault, "default"]]);
    const rest: [string, string][] = [];
    let after: string | null = first.data.nextCursor;
    while (after !== null) {
      const page = await call(app.jfast, "flows.list", { token: VIEWER, input: { limit: 1, after } });
      rest.push(...page.data.items.map((f: { id: string; queue: string }): [string, string] => [f.id, f.queue]));
      after = page.data.nextCursor;
    }
    expect(rest).toEqual([[inMedia[1], "media"], [inMedia[0], "media"]]);
    const onlyMedia = await call(app.jfast, "flows.list", { token: VIEWER, input: { queue: "media" } });
    expect(onlyMedia.data.items).toHaveLength(2);

    expect((await call(app.jfast, "flows.get", { token: VIEWER, input: { id: inMedia[0] } })).data.flow).toMatchObject({ id: inMedia[0], queue: "media" });
    const cancelled = await call(app.jfast, "flows.cancel", { token: OPERATOR, input: { id: inMedia[0] }, mutation: true });
    expect(cancelled.data).toMatchObject({ queue: "media", cancelled: [expect.any(String)] });
  });
});

describe("rabbitmq with the database plugin: admin flows", () => {
  let app: AdminApp;
  afterEach(async () => {
    await app?.close();
  });

  it("lists, shows and cancels a flow kept in the service's database", async () => {
    app = await startAdminApp({
      tasks: [stepTask],
      setup: async () => {
        const queue = uniqueRabbitQueue("admin-flowsdb");
        const schema = uniqueSchema("admin_flows_rmq");
        return {
          plugins: ["database", "queue"],
          sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
          cleanup: async () => {
            await dropRabbitQueue(queue);
            await dropSchema(schema);
          },
        };
      },
    });
    const { flowId, jobIds } = await app.jfast.require("queue").flow({
      name: "order.fulfil",
      steps: { later: new Job({ task: "flow.step", payload: { step: "later" }, delayMs: 60_000 }), after: { job: step("after"), after: ["later"] } },
    });
    const list = await call(app.jfast, "flows.list", { token: VIEWER });
    expect(list.data).toMatchObject({ supported: true, items: [{ id: flowId, name: "order.fulfil", state: "running", total: 2 }] });
    const shown = await call(app.jfast, "flows.get", { token: VIEWER, input: { id: flowId } });
    expect(shown.data.flow.steps.after).toMatchObject({ jobId: jobIds.after, state: "waiting", after: ["later"] });
    const cancelled = await call(app.jfast, "flows.cancel", { token: OPERATOR, input: { id: flowId }, mutation: true });
    expect(cancelled.status).toBe(200);
    expect((await call(app.jfast, "flows.get", { token: VIEWER, input: { id: flowId } })).data.flow.state).toBe("cancelled");
  });
});
