import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job, JobPriority } from "../../src/core/job.js";
import { workerLostError, type QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, startTestWorker, WORKER, type BackendFactory } from "./harness.js";

/** Job priorities (docs/tasks.md#priority): among due jobs a claim takes priority 0 first, 9 last. */
export function describePriority(factory: BackendFactory): void {
  describe(`${factory.name}: priority`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;
    const workers: Worker[] = [];

    beforeEach(async () => {
      ({ backend, cleanup } = await factory.create());
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      await cleanup();
    });

    /** Claims until `n` jobs came back (a broker may hand out fewer than asked per claim), in claim order. */
    async function claimAll(n: number): Promise<Job[]> {
      const claimed: Job[] = [];
      await eventually(`${n} claimed jobs`, async () => {
        claimed.push(...(await backend.claim({ workerId: WORKER, limit: n - claimed.length, leaseMs: 30_000 })));
        return claimed.length >= n;
      });
      return claimed;
    }

    it("claims the lowest priority number first, then in enqueue order within a priority", async () => {
      const jobs = [
        makeJob({ payload: { name: "a" } }),
        makeJob({ payload: { name: "b" }, priority: 9 }),
        makeJob({ payload: { name: "c" }, priority: 0 }),
        makeJob({ payload: { name: "d" }, priority: 5 }),
        makeJob({ payload: { name: "e" }, priority: 0 }),
        makeJob({ payload: { name: "f" }, priority: 2 }),
      ];
      await backend.enqueue({ jobs: jobs.slice(0, 3) });
      await backend.enqueue({ jobs: jobs.slice(3) });
      // One at a time, each finished before the next claim (a broker pushes no more than the claims' room): each
      // claim takes the best of what is due.
      const claimed: Job[] = [];
      for (let i = 0; i < jobs.length; i++) {
        const [next] = await claimAll(1);
        claimed.push(next!);
        await backend.complete({ workerId: WORKER, job: next! });
      }
      expect(claimed.map((j) => (j.payload as { name: string }).name)).toEqual(["c", "e", "f", "a", "d", "b"]);
      expect(claimed.map((j) => j.priority)).toEqual([0, 0, 2, 5, 5, 9]);
    });

    it("orders a batch claim the same way", async () => {
      const priorities: JobPriority[] = [7, 3, 5, 1, 9, 3, 0, 5];
      await backend.enqueue({ jobs: priorities.map((priority, i) => makeJob({ payload: { i }, priority })) });
      const claimed = await claimAll(priorities.length);
      expect(claimed.map((j) => j.priority)).toEqual([...priorities].sort((a, b) => a - b));
      // Within a priority, enqueue order.
      expect(claimed.filter((j) => j.priority === 3).map((j) => (j.payload as { i: number }).i)).toEqual([1, 5]);
    });

    it("passes over a delayed job of a better priority until it is due", async () => {
      const later = makeJob({ payload: { name: "later" }, priority: 0, delayMs: 60_000 });
      const now = makeJob({ payload: { name: "now" }, priority: 9 });
      await backend.enqueue({ jobs: [later, now] });
      const [claimed] = await claimAll(1);
      expect(claimed!.id).toBe(now.id);
      expect((await backend.depths()).scheduled).toBe(1);
    });

    it("keeps a job's priority through retry, release, snooze and a dead letter's retry", async () => {
      const job = makeJob({ payload: { name: "urgent" }, priority: 1, maxAttempts: 5 });
      await backend.enqueue({ jobs: [job] });
      const seen: Array<[string, number]> = [];
      const next = async (step: string) => {
        const [claimed] = await claimAll(1);
        expect(claimed!.id).toBe(job.id);
        seen.push([step, claimed!.priority]);
        return claimed!;
      };
      let claimed = await next("enqueue");
      await backend.retry({ workerId: WORKER, job: claimed, error: workerLostError(claimed.attempts), availableAt: new Date() });
      claimed = await next("retry");
      await backend.release({ workerId: WORKER, jobs: [claimed] });
      claimed = await next("release");
      const { snoozed } = await backend.snooze({ workerId: WORKER, job: claimed, availableAt: new Date(), maxSnoozes: 10 });
      expect(snoozed).toBe(true);
      claimed = await next("snooze");
      await backend.kill({ workerId: WORKER, job: claimed, error: workerLostError(claimed.attempts) });
      const [dead] = await eventually("the dead letter", async () => backend.listDead({ limit: 5 }).then((d) => (d.length > 0 ? d : null)));
      expect(dead!.job.priority).toBe(1);
      expect((await backend.retryDead({ ids: [job.id] })).retried).toEqual([job.id]);
      await next("dead-letter retry");
      expect(seen).toEqual([
        ["enqueue", 1],
        ["retry", 1],
        ["release", 1],
        ["snooze", 1],
        ["dead-letter retry", 1],
      ]);
    });

    it("gives a handler its job's priority, handed over in process or claimed", async () => {
      const priorities: number[] = [];
      const t = defineTask("conf.prioritised", async (_payload, { job }) => {
        priorities.push(job.priority);
      });
      const worker = startTestWorker({ backend, tasks: [t], concurrency: 2, pollIntervalMs: 200 });
      workers.push(worker);
      await backend.enqueue({ jobs: [makeJob({ task: "conf.prioritised", priority: 3 })] });
      await eventually("the first run", async () => priorities.length === 1);
      await backend.enqueue({ jobs: [makeJob({ task: "conf.prioritised", priority: 8 }), makeJob({ task: "conf.prioritised" })] });
      await eventually("three runs", async () => priorities.length === 3);
      expect(priorities[0]).toBe(3);
      expect([...priorities.slice(1)].sort()).toEqual([5, 8]);
    });
  });
}
