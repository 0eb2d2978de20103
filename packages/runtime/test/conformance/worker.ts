import { stat } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { currentJob, currentTenantId } from "../../src/context/context.js";
import { createLogger } from "../../src/observability/logger.js";
import type { Worker } from "../../src/worker/worker.js";
import { BackendError } from "../../src/errors/jfast-error.js";
import type { ErrorCode } from "../../src/errors/codes.js";
import type { PauseStore } from "../../src/core/pause.js";
import { createMemoryPauseStore } from "../../src/queue/pause-stores.js";
import { PausedTasks } from "../../src/queue/paused-tasks.js";
import { eventually, makeJob, sleep, startTestWorker, withMethod, type BackendFactory, expectOwnCapabilities } from "./harness.js";

/** The worker on top of each backend: retries with backoff, exhaustion, unknown tasks, graceful shutdown. */
export function describeWorker(factory: BackendFactory): void {
  describe(`${factory.name}: worker`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;
    let pauseStore: PauseStore;
    const workers: Worker[] = [];
    const pausedSets: PausedTasks[] = [];

    beforeEach(async () => {
      let pauses: PauseStore | undefined;
      ({ backend, cleanup, pauses } = await factory.create());
      expectOwnCapabilities(factory, backend);
      pauseStore = pauses ?? (backend.capabilities.pauseStore ? backend.pauseStore() : createMemoryPauseStore());
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      for (const set of pausedSets.splice(0)) set.stop();
      await cleanup();
    });

    /** What one process of the service reads paused tasks through (refreshed faster than in production). */
    async function pausedTasks(): Promise<PausedTasks> {
      const set = new PausedTasks({ store: pauseStore, logger: createLogger({ service: "conformance", level: "silent" }), refreshMs: 100 });
      await set.start();
      pausedSets.push(set);
      return set;
    }

    function startWorker(tasks: TaskDefinition[], options: { concurrency?: number; leaseMs?: number; paused?: PausedTasks; backend?: QueueBackend } = {}): Worker {
      const worker = startTestWorker({
        backend: options.backend ?? backend,
        tasks,
        concurrency: options.concurrency ?? 4,
        pollIntervalMs: 1000,
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
        paused: options.paused,
      });
      workers.push(worker);
      return worker;
    }

    it("retries with backoff until the handler succeeds, recording each failure", async () => {
      const calls: Array<{ attempt: number; errors: string[] }> = [];
      const flaky = defineTask("conf.flaky", async (_payload, { job }) => {
        calls.push({ attempt: job.attempts, errors: job.errors.map((e) => e.message) });
        if (job.attempts < 3) throw new Error(`declined on attempt ${job.attempts}`);
      });
      await backend.enqueue({ jobs: [makeJob({ task: "conf.flaky", maxAttempts: 5 })] });
      startWorker([flaky]);
      await eventually("three attempts", async () => calls.length === 3);
      await eventually("an empty queue", async () => {
        const d = await backend.depths();
        return d.ready + d.running + d.scheduled + d.dead === 0;
      });
      expect(calls).toEqual([
        { attempt: 1, errors: [] },
        { attempt: 2, errors: ["declined on attempt 1"] },
        { attempt: 3, errors: ["declined on attempt 1", "declined on attempt 2"] },
      ]);
    });

    it("dead-letters a job after max attempts with each attempt's error", async () => {
      const failing = defineTask("conf.failing", async () => {
        throw new RangeError("card declined");
      });
      const job = makeJob({ task: "conf.failing", maxAttempts: 3 });
      await backend.enqueue({ jobs: [job] });
      startWorker([failing]);
      const dead = await eventually("a dead letter", async () => {
        const list = await backend.listDead({ limit: 5 });
        return list.length ? list : null;
      });
      expect(dead[0]!.job.id).toBe(job.id);
      expect(dead[0]!.job.attempts).toBe(3);
      expect(dead[0]!.job.errors.map((e) => [e.attempt, e.class, e.message])).toEqual([
        [1, "RangeError", "card declined"],
        [2, "RangeError", "card declined"],
        [3, "RangeError", "card declined"],
      ]);
    });

    it("dead-letters an unknown task at once, without retrying", async () => {
      const job = makeJob({ task: "conf.nobody_handles_this", maxAttempts: 5 });
      await backend.enqueue({ jobs: [job] });
      startWorker([]);
      const dead = await eventually("the unknown task in dead letters", async () => {
        const list = await backend.listDead({ limit: 5 });
        return list.length ? list : null;
      });
      expect(dead[0]!.job.attempts).toBe(1);
      expect(dead[0]!.lastError).toMatchObject({ class: "UnknownTask", reason: "unknown task" });
    });

    it("fails an attempt that runs past its timeout and retries it", async () => {
      const calls: Array<Array<{ class: string; reason?: string | undefined }>> = [];
      const slow = defineTask("conf.slow_once", { timeoutMs: 200 }, async (_p, { signal, job }) => {
        calls.push(job.errors.map((e) => ({ class: e.class, reason: e.reason })));
        if (calls.length === 1) await new Promise((resolve) => signal.addEventListener("abort", resolve));
      });
      await backend.enqueue({ jobs: [makeJob({ task: "conf.slow_once", maxAttempts: 3 })] });
      startWorker([slow]);
      await eventually("the second attempt", async () => calls.length >= 2);
      expect(calls[1]).toEqual([{ class: "JobTimeoutError", reason: "timeout" }]);
    });

    it("restores the job's tenant and the job itself inside the handler", async () => {
      const seen: Array<[string | null, string | undefined]> = [];
      const t = defineTask("conf.context", async () => {
        seen.push([currentTenantId(), currentJob()?.id]);
      });
      const job = makeJob({ task: "conf.context", tenantId: "acme" });
      await backend.enqueue({ jobs: [job] });
      startWorker([t]);
      await eventually("the handler", async () => seen.length === 1);
      expect(seen).toEqual([["acme", job.id]]);
    });

    it("leaves a paused task's jobs queued while other tasks run, and runs them after resume with attempts unchanged", async () => {
      const ran: string[] = [];
      const held = defineTask("conf.held", async (_p, { job }) => {
        ran.push(`held:${job.attempts}`);
      });
      const free = defineTask("conf.free", async () => {
        ran.push("free");
      });
      // Paused through one process's view of the store; the worker reads it through another's, as in production.
      const operator = await pausedTasks();
      const seenByWorker = await pausedTasks();
      await operator.pause({ task: "conf.held", by: "conformance" });
      await eventually("the pause seen by the worker's process", async () => seenByWorker.has("conf.held"));
      const worker = startWorker([held, free], { paused: seenByWorker });
      await backend.enqueue({ jobs: Array.from({ length: 6 }, (_, i) => makeJob({ task: i % 2 ? "conf.free" : "conf.held", maxAttempts: 2 })) });
      await eventually("the other task's jobs", async () => ran.filter((r) => r === "free").length === 3);
      // Long enough for a worker that ignored the pause to have run them several times over.
      await sleep(1200);
      expect(ran.filter((r) => r !== "free")).toEqual([]);
      await eventually("the paused jobs still queued", async () => {
        const d = await backend.depths();
        return d.ready + d.scheduled === 3 && d.dead === 0;
      });
      expect(worker.activeJobs).toEqual([]);

      await operator.resume({ task: "conf.held" });
      await eventually("the paused jobs after resume", async () => ran.filter((r) => r !== "free").length === 3);
      // No attempt was spent while paused: each ran as its first attempt, and nothing was dead-lettered.
      expect(ran.filter((r) => r !== "free")).toEqual(["held:1", "held:1", "held:1"]);
      expect((await backend.depths()).dead).toBe(0);
    });

    it("on stop, lets a short job finish and releases a long one with its attempt returned", async () => {
      const finished: string[] = [];
      const short = defineTask("conf.short", async () => {
        await sleep(200);
        finished.push("short");
      });
      const long = defineTask("conf.long", async (_p, { signal }) => {
        const outcome = await new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve("long"), 60_000);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve("cancelled");
          });
        });
        finished.push(outcome);
      });
      const shortJob = makeJob({ task: "conf.short" });
      const longJob = makeJob({ task: "conf.long" });
      await backend.enqueue({ jobs: [shortJob, longJob] });
      const worker = startWorker([short, long], { concurrency: 2 });
      await eventually("both running", async () => worker.activeJobs.length === 2);
      const started = Date.now();
      await worker.stop({ graceMs: 1500 });
      const elapsed = Date.now() - started;
      expect(finished).toEqual(["short", "cancelled"]);
      expect(elapsed).toBeLessThan(10_000);
      // The short job completed; the long one is back, claimable now, with its attempt returned.
      const again = await backend.claim({ workerId: "after-stop", limit: 5, leaseMs: 30_000 });
      expect(again.map((j) => j.id)).toEqual([longJob.id]);
      expect(again[0]!.attempts).toBe(1);
      expect(again[0]!.errors).toEqual([]);
    });

    it("stops waiting at once on a second signal (stopNow) and releases what runs", async () => {
      const long = defineTask("conf.forever", async (_p, { signal }) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
      });
      const job = makeJob({ task: "conf.forever" });
      await backend.enqueue({ jobs: [job] });
      const worker = startWorker([long]);
      await eventually("running", async () => worker.activeJobs.length === 1);
      const started = Date.now();
      const stopping = worker.stop({ graceMs: 120_000 });
      await sleep(100);
      worker.stopNow();
      await stopping;
      // Far below the 120 s grace the wait had already started with.
      expect(Date.now() - started).toBeLessThan(60_000);
      const again = await backend.claim({ workerId: "after-stop", limit: 5, leaseMs: 30_000 });
      expect(again.map((j) => j.id)).toEqual([job.id]);
      expect(again[0]!.attempts).toBe(1);
    });

    /**
     * The backend with its outcome writes failing first: `failures` times (Infinity: always) a write of a
     * completion throws `code` before it reaches the backend, as a driver does while the server restarts.
     */
    function failingCompletions(code: ErrorCode, failures: number): { backend: QueueBackend; calls: () => number } {
      let calls = 0;
      const complete: QueueBackend["complete"] = async (params) => {
        calls += 1;
        if (calls <= failures) throw new BackendError("injected: the backend cannot be reached", { code });
        return backend.complete(params);
      };
      return { backend: withMethod(backend, "complete", complete), calls: () => calls };
    }

    it("runs a job once when its handler keeps the event loop busy for three leases, though a second worker claims meanwhile", async () => {
      // Both workers live in this process: the second one's claim after the block must not find the first one's
      // lease expired (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease). Across processes: test/queue/blocked-loop.test.ts.
      // The heartbeat thread steps in after 40 % of a lease without a beat, so its extension has about half a lease to
      // land: 600 ms left too little on a loaded CI machine (a Redis Cluster node answered late once, and the job ran twice).
      const leaseMs = 1200;
      const runs: number[] = [];
      let followedUp = 0;
      const next = makeJob({ task: "conf.next" });
      const busy = defineTask("conf.busy", async (_payload, { job }) => {
        runs.push(job.attempts);
        // Blocking in an I/O callback, as a handler does after a query: the loop's next phases run the immediates,
        // then the timers.
        await stat(".");
        const until = Date.now() + 3 * leaseMs;
        while (Date.now() < until) {
          // CPU work that never yields (a PDF, an image, a large JSON).
        }
        // What waited for the loop (a request, an I/O callback) runs before the timers do, the heartbeat among them:
        // here an enqueue that wakes the idle worker, whose claim then comes before the first worker's heartbeat.
        if (job.attempts === 1) setImmediate(() => void backend.enqueue({ jobs: [next] }));
        await sleep(100);
      });
      const followUp = defineTask("conf.next", () => void followedUp++);
      startWorker([busy, followUp], { concurrency: 1, leaseMs });
      startWorker([busy, followUp], { concurrency: 1, leaseMs });
      await sleep(100);
      const job = makeJob({ task: "conf.busy", maxAttempts: 2 });
      await backend.enqueue({ jobs: [job] });
      await eventually("the follow-up job ran", async () => followedUp === 1, 20_000);
      // Long enough for a lease taken over to show: another run, a lost attempt, a dead letter.
      await sleep(leaseMs * 4 + (factory.leaseSlackMs ?? 0));
      expect(runs).toEqual([1]);
      const depths = await backend.depths();
      expect(depths.dead + depths.running + depths.ready).toBe(0);
      // A backend that keeps finished jobs shows it completed, with no lost attempt recorded (RabbitMQ keeps none).
      const info = factory.capabilities.keepsFinished === false ? null : await backend.getJob({ id: job.id });
      if (info) expect({ state: info.state, errors: info.job.errors }).toEqual({ state: "completed", errors: [] });
    });

    it("records an outcome once the backend can be reached again, without running the job again", async () => {
      let runs = 0;
      const work = defineTask("conf.blip", async () => {
        runs += 1;
      });
      const faulty = failingCompletions("BACKEND_UNAVAILABLE", 2);
      await backend.enqueue({ jobs: [makeJob({ task: "conf.blip" })] });
      // A lease of 30 s: the queue can only be empty within the wait below if the third write went through.
      startWorker([work], { backend: faulty.backend, leaseMs: 30_000 });
      await eventually("the completion written on the third try", async () => faulty.calls() === 3);
      await eventually("an empty queue", async () => {
        const d = await backend.depths();
        return d.ready + d.scheduled + d.running === 0;
      });
      expect(runs).toBe(1);
      expect((await backend.depths()).dead).toBe(0);
    });

    it("leaves the job to its lease when an outcome write fails for another reason", async () => {
      let runs = 0;
      const work = defineTask("conf.refused", async () => {
        runs += 1;
      });
      const faulty = failingCompletions("BACKEND_QUERY_FAILED", Infinity);
      await backend.enqueue({ jobs: [makeJob({ task: "conf.refused" })] });
      startWorker([work], { backend: faulty.backend, leaseMs: 30_000 });
      await eventually("the failed completion", async () => faulty.calls() === 1);
      await sleep(700);
      // Not tried again: the job stays leased, to run again when its lease expires.
      expect(faulty.calls()).toBe(1);
      expect(runs).toBe(1);
      expect((await backend.depths()).running).toBe(1);
    });

    it("stops trying an outcome write again once shutdown's grace period is over", async () => {
      const work = defineTask("conf.down", async () => undefined);
      const faulty = failingCompletions("BACKEND_UNAVAILABLE", Infinity);
      await backend.enqueue({ jobs: [makeJob({ task: "conf.down" })] });
      const worker = startWorker([work], { backend: faulty.backend, leaseMs: 60_000 });
      await eventually("a failed completion", async () => faulty.calls() >= 1);
      const started = Date.now();
      await worker.stop({ graceMs: 500 });
      // Tried again until the grace period ran out (the lease alone would have allowed 40 s).
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(faulty.calls()).toBeGreaterThanOrEqual(2);
    });
  });
}
