import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import { snooze, TOO_MANY_SNOOZES } from "../../src/core/outcome.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep, startTestWorker, type BackendFactory } from "./harness.js";

class CardExpired extends PermanentError {}

/** Outcomes a handler chooses: PermanentError (dead now) and snooze(ms) (later, no attempt spent). */
export function describeOutcomes(factory: BackendFactory): void {
  describe(`${factory.name}: outcomes a handler chooses`, () => {
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

    function startWorker(tasks: TaskDefinition[], maxSnoozes?: number): Worker {
      const worker = startTestWorker({ backend, tasks, concurrency: 4, pollIntervalMs: 1000, ...(maxSnoozes !== undefined ? { maxSnoozes } : {}) });
      workers.push(worker);
      return worker;
    }

    async function firstDead() {
      return eventually("a dead letter", async () => (await backend.listDead({ limit: 5 }))[0]);
    }

    it("dead-letters a job that throws PermanentError at once, without a retry, keeping the error's class", async () => {
      let calls = 0;
      const t = defineTask("conf.permanent", async () => {
        calls++;
        throw new CardExpired("card 4242 expired in 2019");
      });
      const job = makeJob({ task: "conf.permanent", maxAttempts: 5 });
      await backend.enqueue({ jobs: [job] });
      startWorker([t]);
      const dead = await firstDead();
      expect(dead.job.id).toBe(job.id);
      expect(dead.job.attempts).toBe(1);
      expect(dead.lastError).toMatchObject({ attempt: 1, class: "CardExpired", message: "card 4242 expired in 2019" });
      await sleep(300);
      expect(calls).toBe(1);
    });

    it("runs a snoozed job again after the delay without spending an attempt", async () => {
      const runs: Array<{ attempts: number; at: number }> = [];
      const t = defineTask("conf.snoozing", async (_p, { job }) => {
        runs.push({ attempts: job.attempts, at: Date.now() });
        if (runs.length < 3) return snooze(300);
        return undefined;
      });
      await backend.enqueue({ jobs: [makeJob({ task: "conf.snoozing", maxAttempts: 1 })] });
      startWorker([t]);
      await eventually("three runs", async () => runs.length === 3);
      await eventually("an empty queue", async () => {
        const d = await backend.depths();
        return d.ready + d.running + d.scheduled + d.dead === 0;
      });
      // maxAttempts 1: had a snooze spent the attempt, the second run would not have happened.
      expect(runs.map((r) => r.attempts)).toEqual([1, 1, 1]);
      expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(290);
      expect(runs[2]!.at - runs[1]!.at).toBeGreaterThanOrEqual(290);
      expect((await backend.listDead({ limit: 5 })).length).toBe(0);
    });

    it("dead-letters a job that snoozes more than max_snoozes times, with the reason", async () => {
      let runs = 0;
      const t = defineTask("conf.sleepy", async () => {
        runs++;
        return snooze(10);
      });
      const job = makeJob({ task: "conf.sleepy", maxAttempts: 3 });
      await backend.enqueue({ jobs: [job] });
      startWorker([t], 2);
      const dead = await firstDead();
      expect(dead.job.id).toBe(job.id);
      expect(runs).toBe(3);
      expect(dead.job.attempts).toBe(1);
      expect(dead.lastError).toMatchObject({ class: "SnoozeLimit", reason: TOO_MANY_SNOOZES });
      expect(dead.lastError!.message).toContain("max_snoozes");
    });
  });
}
