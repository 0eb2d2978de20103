import { afterEach, describe, expect, it } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { TraceEntry, TraceView } from "../../src/admin/trace.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { REDIS_URL, dropQueue as dropRedisQueue, uniqueQueue as uniqueRedisQueue } from "../redis/redis-test-env.js";
import { AMQP_URL, dropQueue as dropRabbitQueue, uniqueQueue as uniqueRabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

/** order.place enqueues order.ship from its handler: the worker restores the request, so the second job carries it. */
const place = defineTask("order.place", async (payload: { order: string }, { ctx }) => {
  await ctx.require<QueueProvider>("queue").enqueue(new Job({ task: "order.ship", payload }));
});
const ship = defineTask("order.ship", async () => {});

const SETUPS: Record<string, () => Promise<AdminBackendSetup>> = {
  memory: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} }),
  postgres: async () => {
    const schema = uniqueSchema("trace");
    return {
      plugins: ["database", "queue"],
      sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
      cleanup: () => dropSchema(schema),
    };
  },
  redis: async () => {
    const queue = uniqueRedisQueue("trace");
    return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRedisQueue(queue) };
  },
  rabbitmq: async () => {
    const queue = uniqueRabbitQueue("trace");
    return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRabbitQueue(queue) };
  },
};

function byName(entries: TraceEntry[], kind: TraceEntry["kind"], name: string): TraceEntry | undefined {
  return entries.find((e) => e.kind === kind && e.name === name);
}

describe("admin trace.get: one service's share of a request's timeline", () => {
  const apps: AdminApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** A request that enqueues order.place (which enqueues order.ship) and a charge that dies on its only attempt. */
  async function runRequest(app: AdminApp, requestId: string): Promise<{ placed: Job; charge: Job }> {
    const queue = app.jfast.require<QueueProvider>("queue");
    const { placed, charge } = app.jfast.withRequest({ tenantId: null, requestId, traceparent: null, tracestate: null }, () => ({
      placed: new Job({ task: "order.place", payload: { order: "o-1" } }),
      charge: new Job({ task: "billing.charge", payload: { invoice: "in-1" }, maxAttempts: 1 }),
    }));
    await queue.enqueue([placed, charge]);
    // Another request's job, which no timeline of this one may show.
    await queue.enqueue(new Job({ task: "billing.charge", payload: { invoice: "other" }, maxAttempts: 1, requestId: `${requestId}-other` }));
    await eventually("the charges dead", async () => (await app.backend.depths()).dead >= 2);
    return { placed, charge };
  }

  for (const backend of ["memory", "postgres", "redis"] as const) {
    it(`${backend}: by request id, job id and every job the request led to, with outcomes and timings`, async () => {
      const app = await startAdminApp({ setup: SETUPS[backend]!, tasks: [place, ship] });
      apps.push(app);
      const requestId = `req-${backend}-${Date.now()}`;
      const { placed, charge } = await runRequest(app, requestId);
      const shipped = await eventually("order.ship completed", async () => {
        const { data } = await call<TraceView>(app.jfast, "trace.get", { token: VIEWER, input: { id: requestId } });
        const entry = byName(data.entries, "job", "order.ship");
        return entry?.outcome === "completed" && byName(data.entries, "job", "order.place")?.outcome === "completed" ? data : null;
      });
      expect(shipped).toMatchObject({ service: "billing", id: requestId, matched: "request", requestId });
      const jobs = shipped.entries.filter((e) => e.kind === "job");
      expect(jobs.map((e) => e.name).sort()).toEqual(["billing.charge", "order.place", "order.ship"]);
      for (const entry of jobs) expect(entry.requestId).toBe(requestId);
      const dead = byName(shipped.entries, "job", "billing.charge")!;
      expect(dead).toMatchObject({ id: charge.id, outcome: "dead", error: expect.stringMatching(/^CardDeclined: card declined for invoice in-1/) });
      expect(dead.finishedAt).not.toBeNull();
      expect(dead.durationMs).toBeGreaterThanOrEqual(0);
      // Each attempt with its own start, end and worker (docs/jobs.md#timing).
      const chargeAttempt = shipped.entries.find((e) => e.kind === "attempt" && e.parentId === charge.id)!;
      expect(chargeAttempt).toMatchObject({ id: `${charge.id}#1`, outcome: "dead", error: expect.stringMatching(/^CardDeclined: /) });
      expect(chargeAttempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(chargeAttempt.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(chargeAttempt.startedAt));
      const placeAttempt = shipped.entries.find((e) => e.kind === "attempt" && e.parentId === placed.id)!;
      expect(placeAttempt).toMatchObject({ outcome: "completed", name: expect.stringMatching(/^order\.place attempt 1 on /) });
      // Oldest first.
      const starts = shipped.entries.map((e) => Date.parse(e.startedAt));
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      expect(shipped.complete).toBe(backend !== "redis");
      if (backend === "redis") expect(shipped.notes.join(" ")).toMatch(/keeps no index by request id/);

      const fromJob = await call<TraceView>(app.jfast, "trace.get", { token: VIEWER, input: { id: placed.id } });
      expect(fromJob.status).toBe(200);
      expect(fromJob.data).toMatchObject({ matched: "job", requestId });
      expect(fromJob.data.entries.filter((e) => e.kind === "job").map((e) => e.id).sort()).toEqual(jobs.map((e) => e.id).sort());
    });
  }

  it("rabbitmq: the broker keeps no finished job, so the share is the request's dead letters and says why", async () => {
    const app = await startAdminApp({ setup: SETUPS.rabbitmq!, tasks: [place, ship] });
    apps.push(app);
    const requestId = `req-rabbitmq-${Date.now()}`;
    const { charge } = await runRequest(app, requestId);
    const { status, data, error } = await call<TraceView>(app.jfast, "trace.get", { token: VIEWER, input: { id: requestId } });
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data.entries.filter((e) => e.kind === "job").map((e) => e.id)).toEqual([charge.id]);
    expect(data.complete).toBe(false);
    expect(data.notes.join(" ")).toMatch(/RabbitMQ\) keeps no finished job/);
  });

  it("needs a token like every view, and refuses an empty id", async () => {
    const app = await startAdminApp({ setup: SETUPS.memory! });
    apps.push(app);
    expect((await call(app.jfast, "trace.get", { input: { id: "x" } })).status).toBe(401);
    expect((await call(app.jfast, "trace.get", { token: VIEWER, input: { id: "" } })).status).toBe(400);
    const { data } = await call<TraceView>(app.jfast, "trace.get", { token: VIEWER, input: { id: "nothing-here" } });
    expect(data).toMatchObject({ matched: "request", requestId: "nothing-here", entries: [], complete: true });
  });
});
