import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

/** The service's queue in a fresh PostgreSQL schema; `keep` leaves the schema for a restart of the same service. */
function postgres(schema = uniqueSchema("admin"), keep = false): () => Promise<AdminBackendSetup> {
  return async () => ({
    plugins: ["database", "queue"],
    sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
    cleanup: () => (keep ? Promise.resolve() : dropSchema(schema)),
  });
}

describe("postgres: admin queues, pause and resume", () => {
  const runs: Array<{ id: string; attempts: number }> = [];
  const record = defineTask("billing.record", async (_payload: unknown, { job }) => {
    runs.push({ id: job.id, attempts: job.attempts });
  });
  let app: AdminApp;
  afterEach(async () => {
    runs.length = 0;
    await app?.close();
  });

  it("lists every registered task with its depths, zeros included, and per tenant", async () => {
    app = await startAdminApp({ setup: postgres(), tasks: [record] });
    await app.killCharges(2);
    const queue = app.jfast.require("queue");
    await queue.enqueue([
      new Job({ task: "billing.record", tenantId: "acme", delayMs: 60_000 }),
      new Job({ task: "billing.record", tenantId: "globex", delayMs: 60_000 }),
    ]);
    const { status, data } = await call(app.jfast, "queues.list", { token: VIEWER });
    expect(status).toBe(200);
    expect(data).toMatchObject({ enabled: true, countsAre: "exact", countsUnavailableReason: null, pauseSupported: true, pauseUnsupportedReason: null, pauseStore: "sql" });
    const byTask = Object.fromEntries(data.tasks.map((t: { task: string }) => [t.task, t]));
    expect(Object.keys(byTask)).toEqual(["billing.charge", "billing.record", "billing.send_receipt", "receipt.registered->alert.checkBudget"]);
    expect(byTask["billing.charge"]).toEqual({ task: "billing.charge", queue: "default", module: null, ready: 0, scheduled: 0, running: 0, dead: 2, paused: false, pausedAt: null, pausedBy: null });
    // One queue, `default`, with the depths of all its tasks (docs/queues.md#admin-api).
    expect(data.queues).toEqual([expect.objectContaining({ name: "default", dead: 2, scheduled: 2, concurrency: expect.any(Number), pausedInConfig: false, pausedTasks: 0 })]);
    expect(byTask["billing.record"]).toMatchObject({ scheduled: 2, dead: 0 });
    expect(byTask["billing.send_receipt"]).toMatchObject({ ready: 0, scheduled: 0, running: 0, dead: 0 });
    expect(byTask["receipt.registered->alert.checkBudget"]).toMatchObject({ module: "alert" });

    const acme = await call(app.jfast, "queues.list", { token: VIEWER, input: { tenant: "acme" } });
    const acmeByTask = Object.fromEntries(acme.data.tasks.map((t: { task: string }) => [t.task, t]));
    expect(acmeByTask["billing.record"]).toMatchObject({ scheduled: 1 });
    expect(acmeByTask["billing.charge"]).toMatchObject({ dead: 0 });
  });

  it("a viewer cannot pause or resume: FORBIDDEN, nothing changes, nothing audited", async () => {
    app = await startAdminApp({ setup: postgres(), tasks: [record] });
    for (const procedure of ["queues.pause", "queues.resume"]) {
      const answer = await call(app.jfast, procedure, { token: VIEWER, input: { task: "billing.record" }, mutation: true });
      expect(answer.status).toBe(403);
      expect(answer.error?.data.code).toBe("FORBIDDEN");
    }
    const { data } = await call(app.jfast, "queues.list", { token: VIEWER });
    expect(data.tasks.every((t: { paused: boolean }) => !t.paused)).toBe(true);
    expect((await call(app.jfast, "audit.list", { token: VIEWER })).data.entries).toEqual([]);
  });

  it("refuses an unknown task, naming the registered ones", async () => {
    app = await startAdminApp({ setup: postgres(), tasks: [record] });
    const answer = await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.nope" }, mutation: true });
    expect(answer.status).toBe(400);
    expect(answer.error?.data.code).toBe("BAD_REQUEST");
    expect(answer.error?.message).toContain('no task named "billing.nope"');
    expect(answer.error?.message).toContain("billing.record");
    const bad = await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.record", extra: 1 }, mutation: true });
    expect(bad.status).toBe(400);
  });

  it("pause keeps a task's jobs queued while others run; resume runs them with attempts unchanged; both audited", async () => {
    app = await startAdminApp({ setup: postgres(), tasks: [record] });
    const paused = await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.record" }, mutation: true });
    expect(paused.status).toBe(200);
    expect(paused.data).toMatchObject({ task: "billing.record", paused: true, pausedBy: "alice" });

    const queue = app.jfast.require("queue");
    const jobs = Array.from({ length: 3 }, (_, i) => new Job({ task: "billing.record", payload: { i } }));
    await queue.enqueue(jobs);
    // Another task keeps running meanwhile: its charges die as they always do.
    await app.killCharges(1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(runs).toEqual([]);
    const listed = await call(app.jfast, "queues.list", { token: VIEWER });
    expect(listed.data.tasks.find((t: { task: string }) => t.task === "billing.record")).toMatchObject({
      ready: 3,
      running: 0,
      paused: true,
      pausedBy: "alice",
    });

    const resumed = await call(app.jfast, "queues.resume", { token: OPERATOR, input: { task: "billing.record" }, mutation: true });
    expect(resumed.data).toEqual({ task: "billing.record", paused: false, wasPaused: true });
    await eventually("the paused jobs to run", async () => runs.length === 3);
    expect(runs.map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect(runs.map((r) => r.id).sort()).toEqual(jobs.map((j) => j.id).sort());

    const audit = await call(app.jfast, "audit.list", { token: VIEWER });
    expect(audit.data.entries.map((e: { action: string }) => e.action)).toEqual(["queues.resume", "queues.pause"]);
    expect(audit.data.entries[1]).toMatchObject({ actor: "alice", role: "operator", filter: { task: "billing.record" }, outcome: { paused: true, pausedBy: "alice" } });
    expect(audit.data.entries[0]).toMatchObject({ actor: "alice", outcome: { paused: false, wasPaused: true } });
  });
});

describe("postgres: throughput history", () => {
  const record = defineTask("billing.record", async () => {});
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("counts processed, failed and dead per minute and task, and keeps them across a restart", async () => {
    const schema = uniqueSchema("admin");
    const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-restart-"));
    try {
      app = await startAdminApp({ setup: postgres(schema, true), tasks: [record], root });
      await app.jfast.require("queue").enqueue(Array.from({ length: 4 }, () => new Job({ task: "billing.record" })));
      // Each charge fails twice (max_attempts = 2) and dies: 4 failed attempts, 2 dead.
      await app.killCharges(2);
      await eventually("the records to complete", async () => {
        const records = (await app!.backend.depthsByTask()).tasks["billing.record"];
        return !records || records.ready + records.running === 0;
      });
      await app.close();
      app = null;

      // The same service started again on the same database: what was counted before is still there.
      app = await startAdminApp({ setup: postgres(schema), tasks: [record], root });
      const { status, data } = await call(app.jfast, "overview.throughput", { token: VIEWER, input: { minutes: 5 } });
      expect(status).toBe(200);
      expect(data).toMatchObject({ enabled: true, stored: "sql", perTenant: false });
      expect(data.points).toHaveLength(5);
      const minutes = data.points.map((p: { minute: string }) => Date.parse(p.minute));
      expect(minutes.every((m: number, i: number) => m % 60_000 === 0 && (i === 0 || m - minutes[i - 1]! === 60_000))).toBe(true);
      expect(minutes.at(-1)).toBe(Math.floor(Date.now() / 60_000) * 60_000);
      const sum = (points: Array<Record<string, number>>, field: string) => points.reduce((n, p) => n + p[field]!, 0);
      expect([sum(data.points, "processed"), sum(data.points, "failed"), sum(data.points, "dead")]).toEqual([4, 4, 2]);

      const charges = await call(app.jfast, "overview.throughput", { token: VIEWER, input: { minutes: 5, task: "billing.charge" } });
      expect([sum(charges.data.points, "processed"), sum(charges.data.points, "failed"), sum(charges.data.points, "dead")]).toEqual([0, 4, 2]);
      const tooMany = await call(app.jfast, "overview.throughput", { token: VIEWER, input: { minutes: 1441 } });
      expect(tooMany.status).toBe(400);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("admin jobs.search", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });
  const payload = (i: number) => ({ invoice: `inv-${i}`, customer: { id: i % 2 ? "c-1" : "c-2" }, card_number: "4242 4242" });

  it("postgres: by id (primary key) and dead letters by payload through the index, paged, redacted", async () => {
    app = await startAdminApp({ setup: postgres() });
    const ids = await app.killCharges(4, payload);
    const byPayload = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "customer.id", equals: "c-1" } } });
    expect(byPayload.status).toBe(200);
    expect(byPayload.data.scope).toBe("dead letters by payload (indexed)");
    expect(byPayload.data.items.map((j: { id: string }) => j.id).sort()).toEqual([ids[1], ids[3]].sort());
    expect(byPayload.data.items[0]).toMatchObject({ state: "dead", task: "billing.charge", payload: { card_number: "[redacted]", customer: { id: "c-1" } } });

    const first = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "customer.id", equals: "c-1" }, limit: 1 } });
    expect(first.data.items).toHaveLength(1);
    expect(first.data.nextCursor).toMatch(/^k:/);
    const second = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "customer.id", equals: "c-1" }, limit: 1, cursor: first.data.nextCursor } });
    expect(second.data.items.map((j: { id: string }) => j.id)).not.toEqual(first.data.items.map((j: { id: string }) => j.id));
    expect(second.data.nextCursor).toBeNull();

    const byId = await call(app.jfast, "jobs.search", { token: VIEWER, input: { id: ids[0] } });
    expect(byId.data).toMatchObject({ scope: "by id (primary key)", nextCursor: null });
    expect(byId.data.items.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    const wrongState = await call(app.jfast, "jobs.search", { token: VIEWER, input: { id: ids[0], state: "ready" } });
    expect(wrongState.data.items).toEqual([]);

    const byTask = await call(app.jfast, "jobs.search", { token: VIEWER, input: { task: "billing.charge", limit: 10 } });
    expect(byTask.data.items).toHaveLength(4);
    expect(byTask.data.scope).toContain("at most 10000");

    for (const input of [{}, { state: "ready", payload: { path: "customer.id", equals: "c-1" } }, { state: "ready" }, { payload: { path: "customer..id", equals: 1 } }, { task: "billing.charge", cursor: "nope" }, { state: "ready", task: "billing.charge", cursor: "o:5" }]) {
      const refused = await call(app.jfast, "jobs.search", { token: VIEWER, input });
      expect(refused.status, JSON.stringify(input)).toBe(400);
    }
  });

  it("memory: payload search reads a bounded number of dead letters and says so", async () => {
    const { createMemoryBackend } = await import("../../src/backends/memory/memory-backend.js");
    app = await startAdminApp({
      setup: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, backend: createMemoryBackend(), cleanup: async () => {} }),
    });
    const ids = await app.killCharges(4, payload);
    const { data } = await call(app.jfast, "jobs.search", { token: VIEWER, input: { payload: { path: "customer.id", equals: "c-2" }, tenant: undefined } });
    expect(data.scope).toBe("dead letters by payload, newest first, reading at most 10000 per call (the memory queue has no payload index)");
    expect(data.items.map((j: { id: string }) => j.id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(data.budgetReached).toBe(false);
  });
});

describe("postgres: throttled replay, tenant filters", () => {
  let app: AdminApp | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  it("replays matching dead letters at the given rate, reports progress, audits start and end, never twice", async () => {
    app = await startAdminApp({ setup: postgres() });
    const ids = await app.killCharges(30);
    const forbidden = await call(app.jfast, "deadLetters.retryMatching", { token: VIEWER, input: { filter: { task: "billing.charge" } }, mutation: true });
    expect(forbidden.status).toBe(403);
    const tooFast = await call(app.jfast, "deadLetters.retryMatching", { token: OPERATOR, input: { ratePerSecond: 10_001 }, mutation: true });
    expect(tooFast.status).toBe(400);

    const started = await call(app.jfast, "deadLetters.retryMatching", { token: OPERATOR, input: { filter: { task: "billing.charge" }, ratePerSecond: 10 }, mutation: true });
    expect(started.status).toBe(200);
    expect(started.data).toMatchObject({ total: 30, totalExact: true, ratePerSecond: 10 });
    // Part-way: some requeued, not all at once.
    const midway = await eventually("progress part-way", async () => {
      const [replay] = (await call(app!.jfast, "deadLetters.replays", { token: VIEWER })).data;
      return replay.done > 0 && replay.done < 30 ? replay : null;
    });
    expect(midway).toMatchObject({ replayId: started.data.replayId, state: "running", finishedAt: null, by: "alice", filter: { task: "billing.charge" } });

    const done = await eventually("the replay to finish", async () => {
      const [replay] = (await call(app!.jfast, "deadLetters.replays", { token: VIEWER })).data;
      return replay.state === "finished" ? replay : null;
    }, 30_000);
    // Each charge ran again and died again; none was replayed a second time.
    expect(done).toMatchObject({ total: 30, done: 30, failed: 0, error: null });
    await eventually("all dead again", async () => (await app!.backend.depths()).dead === 30);
    const audit = (await call(app.jfast, "audit.list", { token: VIEWER })).data.entries;
    expect(audit.map((e: { action: string }) => e.action)).toEqual(["deadLetters.replay", "deadLetters.retryMatching"]);
    expect(audit[1]).toMatchObject({ actor: "alice", filter: { task: "billing.charge" }, outcome: { replayId: started.data.replayId, total: 30, ratePerSecond: 10 } });
    expect(audit[0].ids.sort()).toEqual([...ids].sort());
    expect(audit[0].outcome).toMatchObject({ state: "finished", done: 30 });
    for (const id of ids.slice(0, 3)) {
      expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } })).data.job.errors).toHaveLength(4);
    }
  });

  it("takes tenant in dead-letter filters, bulk actions and the audit trail", async () => {
    app = await startAdminApp({ setup: postgres() });
    const queue = app.jfast.require("queue");
    await queue.enqueue([
      new Job({ task: "billing.send_receipt", tenantId: "acme", maxAttempts: 1 }),
      new Job({ task: "billing.send_receipt", tenantId: "acme", maxAttempts: 1 }),
      new Job({ task: "billing.send_receipt", tenantId: "globex", maxAttempts: 1 }),
    ]);
    await eventually("three dead", async () => (await app!.backend.depths()).dead === 3);
    const list = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { tenant: "acme" } } });
    expect(list.data.items.map((d: { tenantId: string }) => d.tenantId)).toEqual(["acme", "acme"]);
    expect((await call(app.jfast, "deadLetters.preview", { token: VIEWER, input: { filter: { tenant: "globex" } } })).data).toEqual({ count: 1, exact: true });
    expect((await call(app.jfast, "deadLetters.groups", { token: VIEWER, input: { filter: { tenant: "acme" } } })).data.groups[0].count).toBe(2);
    const clash = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { tenant: "acme", tenantId: "globex" } } });
    expect(clash.status).toBe(400);

    const discarded = await call(app.jfast, "deadLetters.discardMatching", { token: OPERATOR, input: { filter: { tenant: "globex" } }, mutation: true });
    expect(discarded.data.discarded).toBe(1);
    await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.charge" }, mutation: true });
    const globex = await call(app.jfast, "audit.list", { token: VIEWER, input: { tenant: "globex" } });
    expect(globex.data.entries.map((e: { action: string }) => e.action)).toEqual(["deadLetters.discardMatching"]);
    expect((await call(app.jfast, "audit.list", { token: VIEWER, input: { tenant: "initech" } })).data.entries).toEqual([]);
    expect((await call(app.jfast, "audit.list", { token: VIEWER })).data.entries).toHaveLength(2);
  });
});

describe("pausing across processes, and where it cannot be shared", () => {
  const apps: AdminApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0).reverse()) await app.close();
  });

  it("postgres: a pause made through one process stops the workers of another within about a second", async () => {
    const runs: string[] = [];
    const record = defineTask("billing.record", async (_payload: unknown, { job }) => {
      runs.push(job.id);
    });
    const schema = uniqueSchema("admin");
    // Two processes of one service: the same database, each with its own worker; the second drops the schema.
    const api = await startAdminApp({ setup: postgres(schema, true), tasks: [record] });
    apps.push(api);
    const worker = await startAdminApp({ setup: postgres(schema), tasks: [record] });
    apps.push(worker);

    await call(api.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.record" }, mutation: true });
    await eventually("the other process to read the pause", async () => worker.jfast.require("queue").pauses?.has("billing.record"), 5000);
    const jobs = Array.from({ length: 4 }, () => new Job({ task: "billing.record" }));
    await worker.jfast.require("queue").enqueue(jobs);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(runs).toEqual([]);
    expect((await call(worker.jfast, "queues.list", { token: VIEWER })).data.tasks.find((t: { task: string }) => t.task === "billing.record")).toMatchObject({ ready: 4, paused: true, pausedBy: "alice" });

    await call(api.jfast, "queues.resume", { token: OPERATOR, input: { task: "billing.record" }, mutation: true });
    await eventually("the jobs to run after resume", async () => runs.length === 4);
  });

  it("rabbitmq without a database: no per-task counts and no pausing, each saying why", async () => {
    const { AMQP_URL, uniqueQueue, dropQueue } = await import("../rabbitmq/rabbitmq-test-env.js");
    const name = uniqueQueue("admin");
    const app = await startAdminApp({
      setup: async () => ({
        plugins: ["queue"],
        sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${name}"\n${QUEUE_TUNING}`,
        cleanup: () => dropQueue(name),
      }),
    });
    apps.push(app);
    const { data } = await call(app.jfast, "queues.list", { token: VIEWER });
    expect(data).toMatchObject({ enabled: true, pauseSupported: false, pauseStore: null });
    expect(data.countsUnavailableReason).toContain("RabbitMQ does not count messages per task");
    expect(data.pauseUnsupportedReason).toContain('enable the "database" plugin');
    expect(data.tasks.map((t: { task: string }) => t.task)).toContain("billing.charge");
    const refused = await call(app.jfast, "queues.pause", { token: OPERATOR, input: { task: "billing.charge" }, mutation: true });
    expect(refused.status).toBe(412);
    expect(refused.error?.data.code).toBe("PRECONDITION_FAILED");
    expect(refused.error?.message).toContain("jfast_paused_tasks");
  });
});
