import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { JobState } from "../../src/core/job-state.js";
import type { TaskDefinition } from "../../src/core/task.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep, startTestWorker, type BackendFactory, expectOwnCapabilities } from "./harness.js";

/** Cancelling a job: a waiting one never runs; a running one's signal aborts with "cancelled" and it ends cancelled. */
export function describeCancellation(factory: BackendFactory): void {
  describe(`${factory.name}: cancellation`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;
    const workers: Worker[] = [];

    beforeEach(async () => {
      ({ backend, cleanup } = await factory.create());
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      await cleanup();
    });

    function startWorker(tasks: TaskDefinition[], leaseMs = 30_000): Worker {
      const worker = startTestWorker({ backend, tasks, concurrency: 4, pollIntervalMs: 1000, leaseMs });
      workers.push(worker);
      return worker;
    }

    if (factory.capabilities.cancellation === false) {
      it("refuses to cancel with NOT_SUPPORTED (a waiting message cannot be taken out of a queue)", async () => {
        const job = makeJob({ task: "conf.cancel_me" });
        await backend.enqueue({ jobs: [job] });
        await expect(backend.cancel({ id: job.id })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
      });
      return;
    }

    /** The backend finds a job by id in any state (all but RabbitMQ, which records cancellations blindly). */
    const looksUp = factory.capabilities.cancellation !== "recorded";

    it("cancels ready and scheduled jobs, which then never run", async () => {
      const ran: string[] = [];
      const t = defineTask("conf.cancel_me", async (_p, { job }) => {
        ran.push(job.id);
      });
      const ready = makeJob({ task: "conf.cancel_me" });
      const scheduled = makeJob({ task: "conf.cancel_me", delayMs: 300 });
      const kept = makeJob({ task: "conf.cancel_me", delayMs: 400 });
      await backend.enqueue({ jobs: [ready, scheduled, kept] });
      expect(await backend.cancel({ id: ready.id })).toEqual({ cancelled: true, state: JobState.cancelled });
      expect(await backend.cancel({ id: scheduled.id })).toEqual({ cancelled: true, state: JobState.cancelled });
      // Twice is harmless; an unknown id has no state.
      expect(await backend.cancel({ id: ready.id })).toEqual({ cancelled: false, state: JobState.cancelled });
      if (looksUp) {
        expect(await backend.cancel({ id: "no-such-job" })).toEqual({ cancelled: false, state: null });
        expect((await backend.getJob({ id: scheduled.id }))?.state).toBe(JobState.cancelled);
      }
      startWorker([t]);
      await eventually("the job that was not cancelled", async () => ran.includes(kept.id));
      await sleep(300);
      expect(ran).toEqual([kept.id]);
      if (looksUp) expect((await backend.getJob({ id: ready.id }))?.state).toBe(JobState.cancelled);
      await eventually("nothing left waiting", async () => {
        const depths = await backend.depths();
        return depths.ready + depths.scheduled + depths.running + depths.dead === 0;
      });
    });

    it("aborts a running job's signal with reason \"cancelled\"; the job ends cancelled and is never retried", async () => {
      const reasons: unknown[] = [];
      let runs = 0;
      const t = defineTask("conf.long", async (_p, { signal }) => {
        runs++;
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        reasons.push(signal.reason);
        // Throwing after the abort must not turn into a retry.
        throw new Error("stopped early");
      });
      const job = makeJob({ task: "conf.long", maxAttempts: 5 });
      await backend.enqueue({ jobs: [job] });
      // A short lease: the heartbeat that tells the worker runs every lease / 3.
      startWorker([t], 600);
      await eventually("the job running", async () => runs === 1 && (await backend.getJob({ id: job.id }))?.state === JobState.running);
      expect(await backend.cancel({ id: job.id })).toEqual({ cancelled: true, state: JobState.cancelled });
      await eventually("the handler told", async () => reasons.length === 1, 5_000);
      expect(reasons).toEqual(["cancelled"]);
      // Past two leases: neither a retry nor a lease expiry brings it back.
      await sleep(1_300);
      expect(runs).toBe(1);
      if (looksUp) expect((await backend.getJob({ id: job.id }))?.state).toBe(JobState.cancelled);
      expect((await backend.listDead({ limit: 5 })).length).toBe(0);
      const depths = await backend.depths();
      expect(depths.ready + depths.scheduled + depths.running).toBe(0);
    });

    if (!looksUp) return;

    it("leaves a finished job as it is and says so", async () => {
      const t = defineTask("conf.quick", async () => undefined);
      const job = makeJob({ task: "conf.quick" });
      await backend.enqueue({ jobs: [job] });
      startWorker([t]);
      await eventually("the job completed", async () => (await backend.getJob({ id: job.id }))?.state === JobState.completed);
      expect(await backend.cancel({ id: job.id })).toEqual({ cancelled: false, state: JobState.completed });
    });
  });
}
