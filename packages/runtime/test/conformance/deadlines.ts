import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXPIRED_REASON } from "../../src/core/deadline.js";
import { defineTask } from "../../src/core/define-task.js";
import { JobState } from "../../src/core/job-state.js";
import { ListOrder, ListState, type QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskDefinition } from "../../src/core/task.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, expectOwnCapabilities, makeJob, sleep, startTestWorker, type BackendFactory } from "./harness.js";

/**
 * Deadlines (docs/flow-control.md#deadlines): a job not started by its deadline never runs and ends `expired` with the
 * reason, whether a claim reaches it late or the sweep finds it first.
 */
export function describeDeadlines(factory: BackendFactory): void {
  describe(`${factory.name}: deadlines`, () => {
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

    function startWorker(tasks: TaskDefinition[]): Worker {
      const worker = startTestWorker({ backend, tasks, concurrency: 4, pollIntervalMs: 200 });
      workers.push(worker);
      return worker;
    }

    /** Every backend but RabbitMQ looks a job up by id and keeps it once it ended. */
    const looksUp = factory.capabilities.jobLookup && factory.capabilities.keepsFinished;
    const lists = factory.capabilities.listableStates.includes(ListState.expired);

    it("a job claimed after its deadline never runs: it ends expired with the reason, its attempt given back", async () => {
      const ran: string[] = [];
      const t = defineTask("conf.deadline", async (_p, { job }) => {
        ran.push(job.id);
      });
      // Due only after its deadline has passed: the first claim that sees it is late.
      const late = makeJob({ task: "conf.deadline", delayMs: 400, expiresInMs: 100 });
      const ahead = makeJob({ task: "conf.deadline", delayMs: 400, expiresInMs: 60_000 });
      const after = makeJob({ task: "conf.deadline", delayMs: 500 });
      await backend.enqueue({ jobs: [late, ahead, after] });
      startWorker([t]);
      await eventually("the jobs without a passed deadline ran", async () => ran.includes(ahead.id) && ran.includes(after.id));
      await sleep(200);
      expect(ran).not.toContain(late.id);
      if (looksUp) {
        const info = await eventually("the late job expired", async () => {
          const found = await backend.getJob({ id: late.id });
          return found?.state === JobState.expired ? found : null;
        });
        expect(info.job.attempts).toBe(0);
        expect(info.job.errors.at(-1)).toMatchObject({ attempt: 0, class: "JobExpired", reason: EXPIRED_REASON, message: expect.stringContaining("claim") });
        expect(info.job.expiresAt).toBe(late.expiresAt!.toISOString());
      }
      if (lists) {
        const page = await backend.listJobs({ state: ListState.expired, order: ListOrder.newest, limit: 10 });
        expect(page.rows.map((r) => r.job.id)).toEqual([late.id]);
      }
      await eventually("nothing left waiting", async () => {
        const depths = await backend.depths();
        return depths.ready + depths.scheduled + depths.running + depths.dead === 0;
      });
    });

    it("the sweep ends jobs no claim reached before their deadline; a worker started later never runs them", async () => {
      const ran: string[] = [];
      const t = defineTask("conf.deadline", async (_p, { job }) => {
        ran.push(job.id);
      });
      const waiting = makeJob({ task: "conf.deadline", expiresInMs: 50 });
      const scheduled = makeJob({ task: "conf.deadline", delayMs: 5000, expiresInMs: 50 });
      const plain = makeJob({ task: "conf.deadline" });
      await backend.enqueue({ jobs: [waiting, scheduled, plain] });
      await sleep(150);
      const swept = await backend.expireDue({ limit: 100 });
      if (!factory.capabilities.keepsFinished) {
        // RabbitMQ: a waiting message cannot be read in the broker; the claim ends it when it is delivered.
        expect(swept).toBe(0);
      } else {
        expect(swept).toBe(2);
        expect(await backend.expireDue({ limit: 100 })).toBe(0);
        const depths = await backend.depths();
        expect(depths.ready + depths.scheduled).toBe(1);
      }
      if (looksUp) {
        for (const job of [waiting, scheduled]) {
          const info = await backend.getJob({ id: job.id });
          expect(info?.state).toBe(JobState.expired);
          expect(info?.job.errors.at(-1)).toMatchObject({ attempt: 0, class: "JobExpired", reason: EXPIRED_REASON, message: expect.stringContaining("sweep") });
        }
      }
      startWorker([t]);
      await eventually("the plain job ran", async () => ran.includes(plain.id));
      await sleep(200);
      expect(ran).toEqual([plain.id]);
    });

    it("a job that started before its deadline keeps its retries after it", async () => {
      const runs: number[] = [];
      const t = defineTask("conf.deadline", async (_p, { job }) => {
        runs.push(job.attempts);
        // The first attempt fails after the deadline has passed.
        if (job.attempts === 1) {
          await sleep(1500);
          throw new Error("try again");
        }
      });
      // Room for a slow first claim: the deadline passes while the first attempt runs.
      const job = makeJob({ task: "conf.deadline", expiresInMs: 1000 });
      await backend.enqueue({ jobs: [job] });
      startWorker([t]);
      await eventually("the retry ran", async () => runs.length === 2);
      expect(runs).toEqual([1, 2]);
      expect(await backend.expireDue({ limit: 100 })).toBe(0);
      if (looksUp) {
        await eventually("completed", async () => (await backend.getJob({ id: job.id }))?.state === JobState.completed || null);
      }
    });
  });
}
