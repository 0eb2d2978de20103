import { afterEach, describe, expect, it } from "vitest";
import { planFlow, type FlowStepInput } from "../../src/core/flow.js";
import { Job } from "../../src/core/job.js";
import { JobState } from "../../src/core/job-state.js";
import type { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { ListState } from "../../src/core/queue-backend.js";
import { eventually, makeJob, WORKER } from "../conformance/harness.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * Flows as the PostgreSQL queue stores them (docs/postgres.md#flows), beyond the conformance suite: how a waiting
 * step shows in the views, a death the claim writes (a lease expired on the last attempt), a flow step completed
 * with keep_completed = false, and retention taking a finished flow with its last steps.
 */
describe("postgres: flow storage", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function open(options: { keepCompleted?: boolean } = {}): Promise<PostgresBackend> {
    return (await openWithDatabase(options)).backend;
  }

  async function openWithDatabase(options: { keepCompleted?: boolean } = {}) {
    const opened = await openTestBackend(options);
    cleanups.push(opened.cleanup);
    return opened;
  }

  async function claimAll(backend: PostgresBackend, leaseMs = 30_000) {
    return backend.claim({ workerId: WORKER, limit: 100, leaseMs });
  }

  it("shows a waiting step in getJob and among the scheduled jobs, and counts it in no depth", async () => {
    const backend = await open();
    const flow = planFlow({ steps: { a: makeJob(), b: { job: makeJob(), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const b = flow.steps[1]!.job.id;
    expect(await backend.getJob({ id: b })).toMatchObject({ state: JobState.waiting, job: { id: b, flow: { id: flow.id, step: "b" } } });
    for (const order of ["oldest", "newest"] as const) {
      const scheduled = await backend.listJobs({ state: ListState.scheduled, limit: 10, order });
      expect(scheduled.rows.map((r) => r.job.id)).toEqual([b]);
    }
    expect((await backend.listJobs({ state: ListState.ready, limit: 10, order: "oldest" })).rows.map((r) => r.job.id)).toEqual([flow.steps[0]!.job.id]);
    expect(await backend.depths()).toEqual({ ready: 1, scheduled: 0, running: 0, dead: 0 });
    expect(await backend.cancel({ id: b })).toEqual({ cancelled: true, state: JobState.cancelled });
  });

  it("writes a flow in the caller's transaction (outbox.flow): it exists iff the transaction commits", async () => {
    const { backend, database } = await openWithDatabase();
    const committed = planFlow({ steps: { a: makeJob(), b: { job: makeJob(), after: ["a"] } } });
    const rolledBack = planFlow({ steps: { a: makeJob(), b: { job: makeJob(), after: ["a"] } } });
    await database.sql.transaction(async (tx) => {
      expect(await backend.enqueueFlowWithin({ executor: tx, flow: committed })).toEqual({ created: true });
      // Not visible outside the transaction before it commits.
      expect(await backend.getFlow({ id: committed.id })).toBeNull();
    });
    await database.sql
      .transaction(async (tx) => {
        await backend.enqueueFlowWithin({ executor: tx, flow: rolledBack });
        throw new Error("the request failed");
      })
      .catch(() => undefined);
    expect(await backend.getFlow({ id: rolledBack.id })).toBeNull();
    expect(await backend.getJob({ id: rolledBack.steps[0]!.job.id })).toBeNull();
    expect((await backend.getFlow({ id: committed.id }))?.total).toBe(2);
    expect((await claimAll(backend)).map((job) => job.id)).toEqual([committed.steps[0]!.job.id]);
  });

  it("re-encrypts a waiting step in place (jfast keys rotate), as it does a ready job", async () => {
    const backend = await open();
    const sealed = (key: string) => ({ card: { $enc: `${key}:sealed` } });
    const flow = planFlow({ steps: { a: makeJob({ payload: sealed("old") }), b: { job: makeJob({ payload: sealed("old") }), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const result = await backend.rewriteStored({
      rewrite: (parts) => ({ ...parts, payload: JSON.parse(JSON.stringify(parts.payload).replaceAll("old:", "new:")) as unknown }),
    });
    expect(result).toMatchObject({ waiting: 2, dead: 0, skipped: [] });
    expect((await backend.getJob({ id: flow.steps[1]!.job.id }))?.job.payload).toEqual(sealed("new"));
  });

  it("counts a death the claim writes (a lease expired on the last attempt) for the flow and its onParentFailure: \"run\" steps", async () => {
    const backend = await open();
    const a = makeJob({ maxAttempts: 1 });
    const flow = planFlow({ steps: { a, cleanup: { job: makeJob(), after: ["a"], onParentFailure: "run" }, next: { job: makeJob(), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    expect((await claimAll(backend, 1)).map((j) => j.id)).toEqual([a.id]);
    await new Promise((r) => setTimeout(r, 20));
    // The next claim finds a's lease expired on its only attempt: a is dead, and cleanup ready in the same statement.
    const claimed = await eventually("cleanup claimed", async () => {
      const jobs = await claimAll(backend);
      return jobs.length > 0 ? jobs : null;
    });
    expect(claimed.map((j) => j.flow?.step)).toEqual(["cleanup"]);
    const detail = (await backend.getFlow({ id: flow.id }))!;
    expect(detail).toMatchObject({ state: "failed", dead: 1, completed: 0 });
    expect(detail.steps.a).toMatchObject({ state: JobState.dead, error: { class: "WorkerLost" } });
    expect(detail.steps.next!.state).toBe(JobState.waiting);
    // Retried and completed: cleanup is not counted a second time, next runs, the flow completes.
    await backend.complete({ workerId: WORKER, job: claimed[0]! });
    expect(await backend.retryDead({ all: true })).toMatchObject({ retried: [a.id] });
    expect((await backend.getFlow({ id: flow.id }))!.state).toBe("running");
    const [again] = await claimAll(backend);
    await backend.complete({ workerId: WORKER, job: again! });
    const [next] = await claimAll(backend);
    expect(next?.flow?.step).toBe("next");
    await backend.complete({ workerId: WORKER, job: next! });
    expect(await backend.getFlow({ id: flow.id })).toMatchObject({ state: "completed", completed: 3, dead: 0 });
  });

  it("keeps a completed flow step with keep_completed = false, for the steps after it to read", async () => {
    const backend = await open({ keepCompleted: false });
    const flow = planFlow({ steps: { a: makeJob(), b: { job: makeJob(), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const [a] = await claimAll(backend);
    await backend.complete({ workerId: WORKER, job: a!, result: { value: { n: 1 } } });
    expect((await backend.parentOutcomes({ jobIds: [a!.id] })).get(a!.id)).toEqual({ state: "completed", result: { n: 1 } });
    expect((await backend.getJob({ id: flow.steps[1]!.job.id }))?.state).toBe(JobState.ready);
  });

  it("fans 10 000 parallel steps into one: the join is made ready once, by the last completion", async () => {
    const backend = await open();
    const steps: Record<string, FlowStepInput> = {};
    const parents = Array.from({ length: 10_000 }, (_, i) => `p${i}`);
    for (const name of parents) steps[name] = makeJob();
    steps.join = { job: makeJob(), after: parents };
    const flow = planFlow({ steps });
    await backend.enqueueFlow({ flow });
    const join = flow.steps.at(-1)!.job.id;
    let completed = 0;
    const joinClaimedAfter: number[] = [];
    // Two claimers completing side by side, each in batches, as two processes would.
    const drain = async (workerId: string) => {
      for (;;) {
        const jobs = await backend.claim({ workerId, limit: 500, leaseMs: 60_000 });
        if (jobs.length === 0) return;
        const parentsClaimed = jobs.filter((job) => job.id !== join);
        if (parentsClaimed.length < jobs.length) joinClaimedAfter.push(completed);
        await Promise.all(parentsClaimed.map((job) => backend.complete({ workerId, job, result: { value: 1 } })));
        completed += parentsClaimed.length;
      }
    };
    await Promise.all([drain("w1"), drain("w2")]);
    expect(completed).toBe(10_000);
    // Claimed once, once every parent had completed.
    expect(joinClaimedAfter).toEqual([10_000]);
    const info = (await backend.getJob({ id: join }))!;
    expect(info.state).toBe(JobState.running);
    expect((await backend.parentOutcomes({ jobIds: Object.values(info.job.flow!.after) })).size).toBe(10_000);
    await backend.complete({ workerId: info.lockedBy!, job: Job.fromJSON(info.job) });
    expect(await backend.getFlow({ id: flow.id })).toMatchObject({ state: "completed", total: 10_001, completed: 10_001 });
  }, 120_000);

  it("prunes a finished flow with the last of its steps, and a running one not at all", async () => {
    const backend = await open();
    const done = planFlow({ steps: { a: makeJob(), b: { job: makeJob(), after: ["a"] } } });
    const running = planFlow({ steps: { a: makeJob(), b: { job: makeJob(), after: ["a"] } } });
    await backend.enqueueFlow({ flow: done });
    for (let i = 0; i < 2; i++) for (const job of await claimAll(backend)) await backend.complete({ workerId: WORKER, job });
    expect((await backend.getFlow({ id: done.id }))?.state).toBe("completed");
    await backend.enqueueFlow({ flow: running });
    const [first] = await claimAll(backend);
    await backend.complete({ workerId: WORKER, job: first! });

    // One step of the finished flow at a time: the flow goes with the second. The running flow's completed step
    // is kept (its next step reads its result) and does not count among the newest kept.
    const select = { before: new Date(Date.now() + 60_000) };
    expect(await backend.prune({ state: "completed", select: { keepNewest: 1 }, limit: 1 })).toBe(1);
    expect(await backend.getFlow({ id: done.id })).not.toBeNull();
    expect(await backend.prune({ state: "completed", select, limit: 1000 })).toBe(1);
    expect(await backend.getFlow({ id: done.id })).toBeNull();
    expect((await backend.getJob({ id: first!.id }))?.state).toBe(JobState.completed);
    expect((await backend.listFlows({ limit: 10 })).rows.map((f) => f.id)).toEqual([running.id]);
  });
});
