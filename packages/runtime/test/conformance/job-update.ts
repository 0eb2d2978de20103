import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import { JobState } from "../../src/core/job-state.js";
import { ListState, type QueueBackend } from "../../src/core/queue-backend.js";
import { eventually, expectOwnCapabilities, makeJob, WORKER, type BackendFactory } from "./harness.js";

/**
 * Editing a waiting job (`updateJob`, admin jobs.update, docs/admin-api.md#editing-a-waiting-job): its payload,
 * priority and run time change in one step while it still waits; a claimed job, or one that is gone, is left as it
 * is. A backend without `jobActions` (RabbitMQ: a published message cannot change) answers NOT_SUPPORTED.
 */
export function describeJobUpdate(factory: BackendFactory): void {
  describe(`${factory.name}: editing a waiting job`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ backend, cleanup } = await factory.create());
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await cleanup();
    });

    async function claimOne(): Promise<Job> {
      const [job] = await eventually("a claimed job", async () => {
        const claimed = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
        return claimed.length > 0 ? claimed : null;
      });
      return job!;
    }

    if (!factory.capabilities.jobActions) {
      it("answers NOT_SUPPORTED, saying a published message cannot change", async () => {
        const job = makeJob({ payload: { v: 1 }, delayMs: 60_000 });
        await backend.enqueue({ jobs: [job] });
        const error = await backend.updateJob({ id: job.id, task: job.task, payload: { v: 2 } }).then(
          () => null,
          (e: unknown) => e as { code?: string; message?: string },
        );
        expect(error?.code).toBe("NOT_SUPPORTED");
        expect(error?.message).toMatch(/cannot be edited/);
      });
      return;
    }

    it("changes a scheduled job's payload, priority and run time; it then runs with them, first among due jobs", async () => {
      const scheduled = makeJob({ payload: { v: 1, note: "keep" }, delayMs: 60_000 });
      const plain = makeJob({ payload: { name: "plain" } });
      const low = makeJob({ payload: { name: "low" }, priority: 9 });
      await backend.enqueue({ jobs: [scheduled, plain, low] });

      const later = new Date(Date.now() + 120_000);
      expect(await backend.updateJob({ id: scheduled.id, task: scheduled.task, payload: { v: 2, note: "keep" }, priority: 0, availableAt: later })).toEqual({
        done: true,
        state: JobState.ready,
      });
      const stored = await backend.getJob({ id: scheduled.id });
      expect(stored?.state).toBe(JobState.ready);
      expect(stored?.job).toMatchObject({ payload: { v: 2, note: "keep" }, priority: 0, attempts: 0 });
      expect(Date.parse(stored!.job.availableAt)).toBe(later.getTime());
      if (factory.capabilities.listableStates.includes(ListState.scheduled)) {
        const listed = await backend.listJobs({ state: ListState.scheduled, order: "oldest", limit: 10 });
        expect(listed.rows.map((r) => r.job.id)).toEqual([scheduled.id]);
      }
      // A ready job's priority moves it within the due jobs.
      expect(await backend.updateJob({ id: low.id, task: low.task, priority: 1 })).toEqual({ done: true, state: JobState.ready });
      // Due now: the edited job goes first (priority 0), with its new payload.
      expect(await backend.updateJob({ id: scheduled.id, task: scheduled.task, availableAt: new Date(Date.now() - 1000) })).toEqual({ done: true, state: JobState.ready });

      const first = await claimOne();
      expect(first.id).toBe(scheduled.id);
      expect(first.payload).toEqual({ v: 2, note: "keep" });
      expect(first.priority).toBe(0);
      const second = await claimOne();
      expect([second.id, second.priority]).toEqual([low.id, 1]);
      const third = await claimOne();
      expect(third.id).toBe(plain.id);
      expect(third.payload).toEqual({ name: "plain" });

      // Claimed jobs are not edited; nor is a job that is not there.
      expect(await backend.updateJob({ id: first.id, task: first.task, payload: { v: 3 } })).toEqual({ done: false, state: JobState.running });
      expect((await backend.getJob({ id: first.id }))?.job.payload).toEqual({ v: 2, note: "keep" });
      expect(await backend.updateJob({ id: "no-such-job", task: "conf.noop", priority: 2 })).toEqual({ done: false, state: null });
      await backend.complete({ workerId: WORKER, job: first });
      expect((await backend.updateJob({ id: first.id, task: first.task, priority: 3 })).done).toBe(false);
    });

    it("delays a due job: it leaves the due jobs until its new time", async () => {
      const job = makeJob({ payload: { name: "soon" } });
      await backend.enqueue({ jobs: [job] });
      expect(await backend.updateJob({ id: job.id, task: job.task, availableAt: new Date(Date.now() + 60_000) })).toEqual({ done: true, state: JobState.ready });
      expect(await backend.claim({ workerId: WORKER, limit: 5, leaseMs: 30_000 })).toEqual([]);
      expect((await backend.depths()).scheduled).toBe(1);
    });
  });
}
