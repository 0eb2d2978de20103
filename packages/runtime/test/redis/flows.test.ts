import { afterEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { planFlow, planSpawn, type FlowStepInput } from "../../src/core/flow.js";
import { Job } from "../../src/core/job.js";
import { JobState } from "../../src/core/job-state.js";
import { ListOrder, ListState } from "../../src/core/queue-backend.js";
import { RetainedState } from "../../src/core/retention.js";
import type { RedisBackend, RedisBackendOptions } from "../../src/backends/redis/redis-backend.js";
import { queueKeys } from "../../src/backends/redis/keys.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, sleep, startTestWorker } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

const ERROR = { attempt: 1, at: new Date(0).toISOString(), class: "Error", message: "boom" };
const step = (name: string, init: Partial<ConstructorParameters<typeof Job>[0]> = {}) =>
  new Job({ task: "flow.step", payload: { step: name }, maxAttempts: 3, ...init });

/** Flows on Redis beyond the conformance suite (docs/redis.md#flows): the worker-lost path, retention, listings, scale. */
describe("redis: flows", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  async function open(options: Partial<RedisBackendOptions> = {}): Promise<{ backend: RedisBackend; queue: string }> {
    const queue = uniqueQueue("flows");
    const backend = await openBackend(queue, options);
    cleanups.push(async () => {
      await backend.close();
      await dropQueue(queue);
    });
    return { backend, queue };
  }

  it("shows a waiting step by id and under scheduled, and never counts it as ready", async () => {
    const { backend } = await open();
    const flow = planFlow({ steps: { a: step("a"), b: { job: step("b"), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const b = flow.steps[1]!.job;
    expect((await backend.getJob({ id: b.id }))?.state).toBe(JobState.waiting);
    const listed = await backend.listJobs({ state: ListState.scheduled, order: ListOrder.oldest, limit: 10 });
    expect(listed.rows.map((r) => r.job.id)).toEqual([b.id]);
    expect(await backend.depths()).toMatchObject({ ready: 1, running: 0 });
  });

  it("rewrites a waiting step's payload when keys rotate", async () => {
    const { backend } = await open();
    const flow = planFlow({ steps: { a: step("a"), b: { job: step("b"), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const result = await backend.rewriteStored({ rewrite: (parts) => ({ ...parts, payload: { rewritten: true } }) });
    expect(result.waiting).toBe(2);
    expect((await backend.getJob({ id: flow.steps[1]!.job.id }))?.job.payload).toEqual({ rewritten: true });
  });

  it("counts a step that dies of a lost worker on its last attempt, once, and a retry then runs the rest", async () => {
    const { backend } = await open();
    const flow = planFlow({
      steps: {
        a: step("a", { maxAttempts: 1 }),
        then: { job: step("then"), after: ["a"] },
        anyway: { job: step("anyway"), after: ["a"], onParentFailure: "run" },
      },
    });
    await backend.enqueueFlow({ flow });
    const [a, then, anyway] = flow.steps.map((s) => s.job.id);
    const [claimed] = await backend.claim({ workerId: "lost", limit: 1, leaseMs: 20 });
    expect(claimed?.id).toBe(a);
    await sleep(40);
    // The next claim finds the expired lease on the last attempt: dead ("worker lost"), counted for the flow.
    const next = await backend.claim({ workerId: "w2", limit: 10, leaseMs: 30_000 });
    expect(next.map((j) => j.id)).toEqual([anyway]);
    expect((await backend.getJob({ id: a! }))?.state).toBe(JobState.dead);
    expect((await backend.getJob({ id: then! }))?.state).toBe(JobState.waiting);
    // A late outcome of the lost attempt changes nothing.
    await backend.kill({ workerId: "lost", job: claimed!, error: ERROR });
    expect(await backend.getFlow({ id: flow.id })).toMatchObject({ state: "failed", dead: 1, completed: 0 });

    await backend.retryDead({ ids: [a!] });
    const [again] = await backend.claim({ workerId: "w2", limit: 1, leaseMs: 30_000 });
    expect(again?.id).toBe(a);
    await backend.complete({ workerId: "w2", job: again!, result: { value: "ok" } });
    const after = await backend.claim({ workerId: "w2", limit: 10, leaseMs: 30_000 });
    // The "run" step was counted at the death: made ready once, not again at the completion.
    expect(after.map((j) => j.id)).toEqual([then]);
    expect(await backend.getFlow({ id: flow.id })).toMatchObject({ state: "running", dead: 0, completed: 1 });
    expect((await backend.parentOutcomes({ jobIds: [a!] })).get(a!)).toEqual({ state: "completed", result: "ok" });
  });

  it("writes a step's spawned steps with its completion only, once when the completion is written twice", async () => {
    const { backend } = await open();
    const flow = planFlow({ steps: { split: step("split") } });
    await backend.enqueueFlow({ flow });
    const [split] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    const spawn = planSpawn({ job: split!, flow: split!.flow! }, { l1: step("l1"), l2: step("l2") }, { then: { join: step("join") } });
    await backend.complete({ workerId: "other", job: split!, spawn });
    expect(await backend.getFlow({ id: flow.id })).toMatchObject({ total: 1, completed: 0 });
    await backend.complete({ workerId: "w", job: split!, spawn });
    await backend.complete({ workerId: "w", job: split!, spawn });
    const detail = (await backend.getFlow({ id: flow.id }))!;
    expect(detail).toMatchObject({ total: 4, completed: 1, state: "running" });
    expect(detail.steps["split/join"]!.state).toBe(JobState.waiting);
    const lines = await backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 });
    expect(lines.map((j) => j.flow!.step).sort()).toEqual(["split/l1", "split/l2"]);
    for (const line of lines) await backend.complete({ workerId: "w", job: line });
    const [join] = await backend.claim({ workerId: "w", limit: 10, leaseMs: 30_000 });
    expect(join?.flow?.step).toBe("split/join");
  });

  it("makes a child ready at its own time and priority, and wakes workers for it", async () => {
    const { backend, queue } = await open();
    const later = Date.now() + 60_000;
    const flow = planFlow({ steps: { a: step("a"), b: { job: step("b", { availableAt: new Date(later), priority: 2 }), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const [a] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    await backend.complete({ workerId: "w", job: a! });
    const client = rawClient();
    try {
      const keys = queueKeys({ queue });
      expect(Number(await client.zscore(keys.scheduled, flow.steps[1]!.job.id))).toBe(later);
      expect(await client.hget(keys.job(flow.steps[1]!.job.id), "priority")).toBe("2");
    } finally {
      client.disconnect();
    }
  });

  it("prunes a finished flow's keys with the last of its steps", async () => {
    const { backend, queue } = await open();
    const flow = planFlow({ name: "pruned", steps: { a: step("a"), b: { job: step("b"), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    for (let i = 0; i < 2; i++) {
      const [job] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
      await backend.complete({ workerId: "w", job: job! });
    }
    expect((await backend.getFlow({ id: flow.id }))?.state).toBe("completed");
    expect(await backend.prune({ state: RetainedState.completed, select: { before: new Date(Date.now() + 1000) }, limit: 100 })).toBe(2);
    expect(await backend.getFlow({ id: flow.id })).toBeNull();
    expect((await backend.listFlows({ limit: 10 })).rows).toEqual([]);
    const client = rawClient();
    try {
      const keys = await client.keys(`${queueKeys({ queue }).stem}:flow*`);
      expect(keys.filter((k) => !k.endsWith(":flows:seq"))).toEqual([]);
    } finally {
      client.disconnect();
    }
  });

  it("keeps a flow's steps with keep_completed = false until the flow completes, then forgets it whole", async () => {
    const { backend, queue } = await open({ completedRetentionMs: 0 });
    const flow = planFlow({ steps: { a: step("a"), b: { job: step("b"), after: ["a"] } } });
    await backend.enqueueFlow({ flow });
    const [a] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    await backend.complete({ workerId: "w", job: a!, result: { value: 7 } });
    expect((await backend.parentOutcomes({ jobIds: [a!.id] })).get(a!.id)).toEqual({ state: "completed", result: 7 });
    const [b] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    await backend.complete({ workerId: "w", job: b! });
    expect(await backend.getFlow({ id: flow.id })).toBeNull();
    expect(await backend.getJob({ id: a!.id })).toBeNull();
    const client = rawClient();
    try {
      expect(await client.zcard(queueKeys({ queue }).completed)).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it("fans 10 000 parallel steps into one, each completion O(1)", async () => {
    const { backend } = await open();
    const workers: Worker[] = [];
    cleanups.push(async () => {
      await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    });
    const steps: Record<string, FlowStepInput> = {};
    const parents = Array.from({ length: 10_000 }, (_, i) => `s${i}`);
    for (const name of parents) steps[name] = step(name);
    steps.join = { job: step("join"), after: parents };
    const flow = planFlow({ steps });
    const t0 = performance.now();
    await backend.enqueueFlow({ flow });
    const enqueueMs = performance.now() - t0;
    let joined: Record<string, unknown> | undefined;
    let joins = 0;
    let ran = 0;
    const task = defineTask("flow.step", async (payload: { step: string }, tools) => {
      ran += 1;
      if (payload.step === "join") {
        joins += 1;
        joined = tools.flow!.results;
      }
      return 1;
    });
    workers.push(startTestWorker({ backend, tasks: [task], concurrency: 64, pollIntervalMs: 200 }));
    await eventually("the join ran", async () => joined !== undefined, 120_000);
    await sleep(200);
    expect(joins).toBe(1);
    expect(ran).toBe(10_001);
    expect(Object.keys(joined!)).toHaveLength(10_000);
    expect(await backend.getFlow({ id: flow.id })).toMatchObject({ state: "completed", completed: 10_001 });
    expect(enqueueMs).toBeLessThan(10_000);
  }, 180_000);
});
