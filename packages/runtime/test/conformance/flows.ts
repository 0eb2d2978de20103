import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { planBatch, planFlow, type FlowInput, type FlowPlan, type FlowStepInput } from "../../src/core/flow.js";
import type { Job } from "../../src/core/job.js";
import { JobState } from "../../src/core/job-state.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskDefinition, TaskTools } from "../../src/core/task.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, expectOwnCapabilities, makeJob, sleep, startTestWorker, WORKER, type BackendFactory } from "./harness.js";

/** A plan as `queue.flow` makes it (the jobs get their max attempts from makeJob). */
function plan(steps: FlowInput["steps"], name?: string): FlowPlan {
  return planFlow({ ...(name ? { name } : {}), steps });
}

/** What each handler saw, by step name: its payload's step, its tools.flow and tools.batch. */
interface Seen {
  step: string;
  flow: TaskTools["flow"];
  batch: TaskTools["batch"];
}

/**
 * Flows and batches (docs/flows.md): a step runs once every step it is after has completed, reads their results,
 * and is made ready exactly once however its parents finish (in parallel on two backends standing for two
 * processes, an outcome written twice). A dead step stops the steps after it until it is retried; a flow can be
 * cancelled. A backend without flows says NOT_SUPPORTED for each member.
 */
export function describeFlows(factory: BackendFactory): void {
  describe(`${factory.name}: flows`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;
    let peer: (() => Promise<QueueBackend>) | undefined;
    const workers: Worker[] = [];
    beforeEach(async () => {
      ({ backend, cleanup, peer } = await factory.create());
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      await cleanup();
    });

    if (!factory.capabilities.flows) {
      it("refuses every flow member with NOT_SUPPORTED", async () => {
        const flow = plan({ a: makeJob(), b: { job: makeJob(), after: ["a"] } });
        await expect(backend.enqueueFlow({ flow })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        await expect(backend.getFlow({ id: flow.id })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        await expect(backend.listFlows({ limit: 10 })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        await expect(backend.cancelFlow({ id: flow.id })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        await expect(backend.parentOutcomes({ jobIds: [] })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
      });
      return;
    }

    /** A task whose handler records what it saw and returns `returns(step)`; `fail(step)` throws instead. */
    function recordingTask(name: string, seen: Seen[], behaviour: { returns?: (step: string) => unknown; fail?: (step: string) => boolean } = {}): TaskDefinition {
      return defineTask(name, async (payload: { step: string }, tools) => {
        seen.push({ step: payload.step, flow: tools.flow, batch: tools.batch });
        if (behaviour.fail?.(payload.step)) throw new PermanentError(`${payload.step} failed on purpose`);
        return behaviour.returns ? behaviour.returns(payload.step) : { from: payload.step };
      });
    }

    const stepJob = (step: string, task = "conf.step"): Job => makeJob({ task, payload: { step } });

    function run(tasks: TaskDefinition[], on: QueueBackend = backend, concurrency = 4): void {
      workers.push(startTestWorker({ backend: on, tasks, concurrency, pollIntervalMs: 200, workerId: `${WORKER}-${workers.length}` }));
    }

    it("runs each step after the steps it is after, and hands it their results by step name", async () => {
      const seen: Seen[] = [];
      const flow = plan(
        {
          charge: stepJob("charge"),
          reserve: stepJob("reserve"),
          ship: { job: stepJob("ship"), after: ["charge", "reserve"] },
          notify: { job: stepJob("notify"), after: ["ship"] },
        },
        "order.fulfil",
      );
      expect(await backend.enqueueFlow({ flow })).toEqual({ created: true });
      const ids = Object.fromEntries(flow.steps.map((s) => [s.name, s.job.id]));
      expect((await backend.getJob({ id: ids.ship! }))?.state).toBe(JobState.waiting);
      run([recordingTask("conf.step", seen)]);
      await eventually("the flow completed", async () => (await backend.getFlow({ id: flow.id }))?.state === "completed");

      const order = seen.map((s) => s.step);
      expect(order.indexOf("ship")).toBeGreaterThan(order.indexOf("charge"));
      expect(order.indexOf("ship")).toBeGreaterThan(order.indexOf("reserve"));
      expect(order.indexOf("notify")).toBeGreaterThan(order.indexOf("ship"));
      expect(order.sort()).toEqual(["charge", "notify", "reserve", "ship"]);
      const ship = seen.find((s) => s.step === "ship")!;
      expect(ship.flow).toMatchObject({ id: flow.id, step: "ship", results: { charge: { from: "charge" }, reserve: { from: "reserve" } } });
      expect(seen.find((s) => s.step === "notify")!.flow?.results).toEqual({ ship: { from: "ship" } });
      expect(seen.find((s) => s.step === "charge")!.flow).toMatchObject({ id: flow.id, step: "charge", results: {} });
      expect(ship.batch).toBeUndefined();

      const detail = (await backend.getFlow({ id: flow.id }))!;
      expect(detail).toMatchObject({ id: flow.id, name: "order.fulfil", kind: "flow", state: "completed", total: 4, completed: 4, dead: 0 });
      expect(detail.finishedAt).not.toBeNull();
      expect(detail.steps.ship).toMatchObject({ jobId: ids.ship, task: "conf.step", state: "completed", after: ["charge", "reserve"], attempts: 1, result: { from: "ship" } });
      expect(Object.keys(detail.steps).sort()).toEqual(["charge", "notify", "reserve", "ship"]);
      // Each completed step's duration, from its attempt's record (RabbitMQ's flow store keeps it from the outcome).
      for (const step of Object.values(detail.steps)) {
        expect(step.durationMs).toBeGreaterThanOrEqual(0);
        expect(Date.parse(step.startedAt!)).toBeLessThanOrEqual(Date.parse(step.finishedAt!) + 1000);
      }
    });

    it("writes a flow once: the same flow written again is a no-op", async () => {
      const flow = plan({ a: stepJob("a"), b: { job: stepJob("b"), after: ["a"] } });
      expect(await backend.enqueueFlow({ flow })).toEqual({ created: true });
      expect(await backend.enqueueFlow({ flow })).toEqual({ created: false });
      const detail = await backend.getFlow({ id: flow.id });
      expect(detail?.total).toBe(2);
      expect(await backend.getFlow({ id: "no-such-flow" })).toBeNull();
      expect(await backend.cancelFlow({ id: "no-such-flow" })).toBeNull();
    });

    it("counts a step's completion once when its outcome is written twice", async () => {
      const flow = plan({ a: stepJob("a"), b: stepJob("b"), c: { job: stepJob("c"), after: ["a", "b"] } });
      await backend.enqueueFlow({ flow });
      const { a, b, c } = Object.fromEntries(flow.steps.map((s) => [s.name, s.job.id]));
      const first = await claimUntil(backend, (jobs) => jobs.some((j) => j.id === a) && jobs.some((j) => j.id === b));
      const jobA = first.find((j) => j.id === a)!;
      await backend.complete({ workerId: WORKER, job: jobA, result: { value: 1 } });
      await backend.complete({ workerId: WORKER, job: jobA, result: { value: 1 } });
      expect((await backend.getJob({ id: c! }))?.state).toBe(JobState.waiting);
      await backend.complete({ workerId: WORKER, job: first.find((j) => j.id === b)! });
      expect((await backend.getJob({ id: c! }))?.state).toBe(JobState.ready);
      const [claimedC] = await claimUntil(backend, (jobs) => jobs.some((j) => j.id === c));
      expect(claimedC!.flow).toMatchObject({ id: flow.id, step: "c", after: { a, b } });
      const outcomes = await backend.parentOutcomes({ jobIds: [a!, b!] });
      expect(outcomes.get(a!)).toEqual({ state: "completed", result: 1 });
      expect(outcomes.get(b!)).toEqual({ state: "completed", result: undefined });
    });

    it("makes a fan-in step ready exactly once when its parents complete in parallel on two processes", async () => {
      const other = peer ? await peer() : backend;
      const seen: Seen[] = [];
      const steps: Record<string, FlowStepInput> = {};
      const parents = Array.from({ length: 60 }, (_, i) => `p${i}`);
      for (const name of parents) steps[name] = stepJob(name);
      steps.join = { job: stepJob("join"), after: parents };
      const flow = plan(steps);
      await backend.enqueueFlow({ flow });
      const task = recordingTask("conf.step", seen, { returns: (step) => step.length });
      run([task], backend, 8);
      run([task], other, 8);
      await eventually("the flow completed", async () => (await backend.getFlow({ id: flow.id }))?.state === "completed");
      await sleep(300);
      const joins = seen.filter((s) => s.step === "join");
      expect(joins).toHaveLength(1);
      expect(Object.keys(joins[0]!.flow!.results)).toHaveLength(60);
      expect(joins[0]!.flow!.results.p10).toBe(3);
      expect(seen).toHaveLength(61);
    });

    it("stops the steps after a dead step, and resumes them when it is retried", async () => {
      const seen: Seen[] = [];
      let failing = true;
      const flow = plan({ a: stepJob("a"), b: { job: stepJob("b"), after: ["a"] }, c: { job: stepJob("c"), after: ["b"] } });
      await backend.enqueueFlow({ flow });
      const ids = Object.fromEntries(flow.steps.map((s) => [s.name, s.job.id]));
      run([recordingTask("conf.step", seen, { fail: (step) => step === "a" && failing })]);
      await eventually("the flow failed", async () => (await backend.getFlow({ id: flow.id }))?.state === "failed");
      const failed = (await backend.getFlow({ id: flow.id }))!;
      expect(failed).toMatchObject({ dead: 1, completed: 0 });
      expect(failed.steps.a).toMatchObject({ state: "dead", error: { class: "PermanentError", message: "a failed on purpose" } });
      // A dead step's duration is its last attempt's, as a completed one's.
      expect(failed.steps.a!.durationMs).toBeGreaterThanOrEqual(0);
      expect(typeof failed.steps.a!.startedAt).toBe("string");
      expect(failed.steps.b!.state).toBe(JobState.waiting);
      await sleep(200);
      expect(seen.map((s) => s.step)).toEqual(["a"]);

      failing = false;
      expect(await backend.retryDead({ ids: [ids.a!] })).toEqual({ retried: [ids.a], missing: [] });
      // No longer failed: running again (or, on a fast backend, already through the steps after it).
      expect(["running", "completed"]).toContain((await backend.getFlow({ id: flow.id }))?.state);
      await eventually("the flow completed", async () => (await backend.getFlow({ id: flow.id }))?.state === "completed");
      expect(seen.map((s) => s.step)).toEqual(["a", "a", "b", "c"]);
    });

    it('runs a step declared onParentFailure: "run" with { error } in place of a dead parent\'s result', async () => {
      const seen: Seen[] = [];
      const flow = plan({
        a: stepJob("a"),
        b: stepJob("b"),
        cleanup: { job: stepJob("cleanup"), after: ["a", "b"], onParentFailure: "run" },
        after: { job: stepJob("after"), after: ["a"] },
      });
      await backend.enqueueFlow({ flow });
      run([recordingTask("conf.step", seen, { fail: (step) => step === "a" })]);
      await eventually("cleanup ran", async () => seen.some((s) => s.step === "cleanup"));
      const cleanupSaw = seen.find((s) => s.step === "cleanup")!;
      expect(cleanupSaw.flow!.results).toEqual({ a: { error: { class: "PermanentError", message: "a failed on purpose" } }, b: { from: "b" } });
      await sleep(200);
      expect(seen.some((s) => s.step === "after")).toBe(false);
      const detail = (await backend.getFlow({ id: flow.id }))!;
      expect(detail.state).toBe("failed");
      expect(detail.steps.after!.state).toBe(JobState.waiting);
    });

    it("cancels every unfinished step of a flow, a running one through its worker's heartbeat", async () => {
      const started: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const slow = defineTask("conf.step", async (payload: { step: string }, tools) => {
        started.push(payload.step);
        if (payload.step === "a") return undefined;
        await Promise.race([gate, new Promise((r) => tools.signal.addEventListener("abort", r))]);
        return undefined;
      });
      const flow = plan({ a: stepJob("a"), b: { job: stepJob("b"), after: ["a"] }, c: { job: stepJob("c"), after: ["b"] }, d: makeJob({ task: "conf.step", payload: { step: "d" }, delayMs: 60_000 }) });
      await backend.enqueueFlow({ flow });
      const ids = Object.fromEntries(flow.steps.map((s) => [s.name, s.job.id]));
      run([slow]);
      await eventually("b is running", async () => started.includes("b") && (await backend.getJob({ id: ids.b! }))?.state === JobState.running);
      const result = await backend.cancelFlow({ id: flow.id });
      expect(result?.cancelled.sort()).toEqual([ids.b, ids.c, ids.d].sort());
      const detail = (await backend.getFlow({ id: flow.id }))!;
      expect(detail.state).toBe("cancelled");
      expect(detail.steps.a!.state).toBe(JobState.completed);
      for (const step of ["b", "c", "d"]) expect(detail.steps[step]!.state).toBe(JobState.cancelled);
      release();
      await sleep(300);
      expect(started).toEqual(["a", "b"]);
      expect((await backend.getJob({ id: ids.b! }))?.state).toBe(JobState.cancelled);
    });

    it("runs a batch's onComplete once all its jobs finished and onSuccess once all completed, with tools.batch", async () => {
      const seen: Seen[] = [];
      let failing = true;
      const jobs = ["j0", "j1", "j2"].map((step) => stepJob(step));
      const flow = planBatch(jobs, { onComplete: stepJob("onComplete", "conf.callback"), onSuccess: stepJob("onSuccess", "conf.callback"), name: "import" });
      await backend.enqueueFlow({ flow });
      run([recordingTask("conf.step", seen, { fail: (step) => step === "j1" && failing }), recordingTask("conf.callback", seen)]);
      await eventually("onComplete ran", async () => seen.some((s) => s.step === "onComplete"));
      const onComplete = seen.find((s) => s.step === "onComplete")!;
      expect(onComplete.batch).toEqual({ id: flow.id, total: 3, completed: 2, dead: 1 });
      await sleep(200);
      expect(seen.some((s) => s.step === "onSuccess")).toBe(false);
      expect((await backend.getFlow({ id: flow.id }))).toMatchObject({ kind: "batch", name: "import", state: "failed" });

      failing = false;
      await backend.retryDead({ ids: [jobs[1]!.id] });
      await eventually("onSuccess ran", async () => seen.some((s) => s.step === "onSuccess"));
      expect(seen.find((s) => s.step === "onSuccess")!.batch).toEqual({ id: flow.id, total: 3, completed: 3, dead: 0 });
      await eventually("the batch completed", async () => (await backend.getFlow({ id: flow.id }))?.state === "completed");
      expect(seen.filter((s) => s.step === "onComplete")).toHaveLength(1);
    });

    it("adds the steps a running step spawns with its completion, once, and runs their join after them", async () => {
      const lines = ["l1", "l2", "l3"];
      let splitAttempts = 0;
      const joined: Record<string, unknown>[] = [];
      const ranLines: string[] = [];
      const flow = plan({ split: stepJob("split"), report: { job: stepJob("report"), after: ["split"] } });
      await backend.enqueueFlow({ flow });
      run([
        defineTask("conf.step", async (payload: { step: string; line?: string }, tools) => {
          if (payload.step === "split") {
            splitAttempts += 1;
            tools.flow!.spawn(Object.fromEntries(lines.map((line) => [line, makeJob({ task: "conf.step", payload: { step: "line", line } })])), {
              then: { join: makeJob({ task: "conf.step", payload: { step: "join" } }) },
            });
            // The first attempt fails after spawning: what it spawned is never written.
            if (splitAttempts === 1) throw new Error("the first attempt fails after spawning");
            return { lines: lines.length };
          }
          if (payload.step === "line") {
            ranLines.push(payload.line!);
            return { line: payload.line };
          }
          if (payload.step === "join") joined.push(tools.flow!.results);
          return undefined;
        }),
      ]);
      await eventually("the flow completed", async () => (await backend.getFlow({ id: flow.id }))?.state === "completed");
      expect(splitAttempts).toBe(2);
      expect(ranLines.sort()).toEqual(lines);
      expect(joined).toEqual([{ split: { lines: 3 }, "split/l1": { line: "l1" }, "split/l2": { line: "l2" }, "split/l3": { line: "l3" } }]);
      const detail = (await backend.getFlow({ id: flow.id }))!;
      expect(detail.total).toBe(6);
      expect(Object.keys(detail.steps).sort()).toEqual(["report", "split", "split/join", "split/l1", "split/l2", "split/l3"]);
      expect(detail.steps["split/join"]!.after.sort()).toEqual(["split", "split/l1", "split/l2", "split/l3"]);
      expect(detail.steps["split/l1"]!.after).toEqual(["split"]);
    });

    it("fans 1 000 parallel steps into one", async () => {
      let joined: Record<string, unknown> | undefined;
      // Each step's attempts as its handler saw them: a step run twice shows how (a lost attempt counts 2).
      const runs = new Map<string, number[]>();
      const steps: Record<string, FlowStepInput> = {};
      const parents = Array.from({ length: 1000 }, (_, i) => `s${i}`);
      for (const name of parents) steps[name] = stepJob(name);
      steps.join = { job: stepJob("join"), after: parents };
      const flow = plan(steps);
      await backend.enqueueFlow({ flow });
      run([
        defineTask("conf.step", async (payload: { step: string }, tools) => {
          runs.set(payload.step, [...(runs.get(payload.step) ?? []), tools.job.attempts]);
          if (payload.step === "join") joined = tools.flow!.results;
          return 1;
        }),
      ], backend, 32);
      await eventually("the join ran", async () => joined !== undefined, 60_000);
      expect(Object.keys(joined!)).toHaveLength(1000);
      const twice = [...runs].filter(([, attempts]) => attempts.length > 1).map(([step, attempts]) => `${step}: attempts ${attempts.join(", ")}`);
      expect(twice, "steps run more than once").toEqual([]);
      expect(runs.size).toBe(1001);
    });

    // A backend that keeps no finished job (RabbitMQ) prunes its flow store on its own: test/rabbitmq/flows.test.ts.
    if (factory.capabilities.keepsFinished) it("keeps a running flow's completed steps from retention, and prunes a finished flow with its steps", async () => {
      const running = plan({ a: stepJob("a"), b: { job: stepJob("b"), after: ["a"], }, c: { job: stepJob("c"), after: ["b"] } });
      const finished = plan({ x: stepJob("x") });
      await backend.enqueueFlow({ flow: running });
      await backend.enqueueFlow({ flow: finished });
      const ids = Object.fromEntries([...running.steps, ...finished.steps].map((s) => [s.name, s.job.id]));
      // a and x complete; b is claimed and held, so the running flow cannot finish while retention runs.
      const claimed = await claimUntil(backend, (jobs) => [ids.a, ids.x].every((id) => jobs.some((j) => j.id === id)));
      for (const job of claimed) await backend.complete({ workerId: WORKER, job, result: { value: job.id } });
      await claimUntil(backend, (jobs) => jobs.some((j) => j.id === ids.b));
      await eventually("the finished flow completed", async () => (await backend.getFlow({ id: finished.id }))?.state === "completed");
      await backend.prune({ state: "completed", select: { keepNewest: 0 }, limit: 1000 });
      expect((await backend.getJob({ id: ids.a! }))?.state).toBe(JobState.completed);
      expect((await backend.getFlow({ id: running.id }))?.state).toBe("running");
      expect(await backend.getJob({ id: ids.x! })).toBeNull();
      expect(await backend.getFlow({ id: finished.id })).toBeNull();
    });

    it("lists flows newest first, by state and name", async () => {
      const first = plan({ a: stepJob("a") }, "first");
      const second = plan({ a: stepJob("a"), b: { job: stepJob("b"), after: ["a"] } }, "second");
      await backend.enqueueFlow({ flow: first });
      await backend.enqueueFlow({ flow: second });
      const all = await backend.listFlows({ limit: 10 });
      expect(all.rows.map((f) => f.id)).toEqual([second.id, first.id]);
      expect(all.rows[0]).toMatchObject({ name: "second", kind: "flow", state: "running", total: 2, completed: 0, dead: 0, finishedAt: null });
      expect((await backend.listFlows({ limit: 10, name: "first" })).rows.map((f) => f.id)).toEqual([first.id]);
      expect((await backend.listFlows({ limit: 10, state: "completed" })).rows).toEqual([]);
      const page = await backend.listFlows({ limit: 1 });
      expect(page.rows.map((f) => f.id)).toEqual([second.id]);
      expect(page.next).not.toBeNull();
      const rest = await backend.listFlows({ limit: 1, after: page.next! });
      expect(rest.rows.map((f) => f.id)).toEqual([first.id]);
    });
  });
}

/** Claims until `done` holds for everything claimed so far; returns all of it. */
async function claimUntil(backend: QueueBackend, done: (jobs: Job[]) => boolean): Promise<Job[]> {
  const claimed: Job[] = [];
  await eventually("the claims", async () => {
    claimed.push(...(await backend.claim({ workerId: WORKER, limit: 10, leaseMs: 30_000 })));
    return done(claimed);
  });
  return claimed;
}
