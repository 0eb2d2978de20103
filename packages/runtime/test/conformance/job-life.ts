import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { DEFAULT_JOB_LOG_LINES } from "../../src/core/job-life.js";
import { planFlow } from "../../src/core/flow.js";
import type { JobInfo, QueueBackend } from "../../src/core/queue-backend.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, expectOwnCapabilities, makeJob, startTestWorker, type BackendFactory } from "./harness.js";

const WORKER_ID = "life-worker";

/**
 * A job's life (docs/jobs.md): `tools.progress` is seen on the running job and its last value stays with the
 * attempt; `tools.log` lines are kept per attempt, bounded; each attempt records its start, end, duration, worker
 * and outcome, and the job its enqueue time and wait. RabbitMQ keeps no completed job (its records go with it), and
 * carries the records of failed attempts in the message, so a dead letter shows them all.
 */
export function describeJobLife(factory: BackendFactory): void {
  describe(`${factory.name}: a job's life`, () => {
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

    it("shows a running job's progress, and keeps its last value, its log lines and its timing with the attempt", async () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let finished = false;
      const task = defineTask("conf.life", async (_payload: unknown, tools) => {
        tools.log.info("started", { step: 1 });
        tools.progress(10);
        await released;
        tools.progress(50);
        tools.progress({ done: 2, total: 4 });
        tools.log.warn("almost there");
        finished = true;
        return { ok: true };
      });
      const job = makeJob({ task: "conf.life" });
      await backend.enqueue({ jobs: [job] });
      workers.push(startTestWorker({ backend, tasks: [task], concurrency: 1, pollIntervalMs: 200, workerId: WORKER_ID }));

      const running = await eventually("progress on the running job", async () => {
        const info = await backend.getJob({ id: job.id });
        return info?.state === "running" && info.progress === 10 ? info : undefined;
      });
      expect(running.enqueuedAt).toBe(job.createdAt.toISOString());
      release();
      await eventually("the handler returned", async () => finished);

      if (factory.capabilities.keepsFinished === false) {
        await eventually("the job acked", async () => (await backend.depths()).running === 0);
        // Acked and kept nowhere: RabbitMQ cannot say more about the id (docs/rabbitmq.md#a-jobs-life).
        await expect(backend.getJob({ id: job.id })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        return;
      }
      const done = await eventually("the job completed", async () => {
        const info = await backend.getJob({ id: job.id });
        return info?.state === "completed" ? info : undefined;
      });
      // The last value, written with the outcome though it came within a second of the one before.
      expect(done.progress).toEqual({ done: 2, total: 4 });
      expect(done.attempts).toHaveLength(1);
      const [attempt] = done.attempts!;
      expect(attempt).toMatchObject({ attempt: 1, outcome: "completed", workerId: WORKER_ID, progress: { done: 2, total: 4 } });
      expect(Date.parse(attempt!.finishedAt) - Date.parse(attempt!.startedAt)).toBeGreaterThanOrEqual(0);
      expect(attempt!.durationMs).toBeGreaterThanOrEqual(0);
      expect(attempt!.logs.map((l) => [l.level, l.message, l.fields])).toEqual([
        ["info", "started", { step: 1 }],
        ["warn", "almost there", undefined],
      ]);
      expect(done.logs).toEqual(attempt!.logs);
      expect(done.waitMs).toBeGreaterThanOrEqual(0);
      expect(done.durationMs).toBe(attempt!.durationMs);
      expect(done.finishedAt).toBe(attempt!.finishedAt);
    });

    it("records every attempt of a job that failed, with its error and its own lines, up to its dead letter", async () => {
      const task = defineTask("conf.life_fail", { maxAttempts: 2 }, async (_payload: unknown, tools) => {
        tools.log.error(`attempt ${tools.job.attempts}`);
        tools.progress(tools.job.attempts * 10);
        throw new Error(`boom ${tools.job.attempts}`);
      });
      const job = makeJob({ task: "conf.life_fail", maxAttempts: 2 });
      await backend.enqueue({ jobs: [job] });
      workers.push(startTestWorker({ backend, tasks: [task], concurrency: 1, pollIntervalMs: 100, workerId: WORKER_ID }));
      const dead = await eventually("the dead letter", async () => {
        const info = await backend.getJob({ id: job.id });
        return info?.state === "dead" ? info : undefined;
      });
      expect(dead.attempts!.map((a) => [a.attempt, a.outcome, a.error?.message, a.logs.map((l) => l.message), a.progress])).toEqual([
        [1, "failed", "boom 1", ["attempt 1"], 10],
        [2, "dead", "boom 2", ["attempt 2"], 20],
      ]);
      expect(dead.logs!.map((l) => l.message)).toEqual(["attempt 2"]);
      expect(dead.progress).toBe(20);
      expect(dead.waitMs).toBeGreaterThanOrEqual(0);
      expect("runs" in dead.job).toBe(false);
    });

    it("keeps at most job_log_lines lines of an attempt and counts the rest", async () => {
      const task = defineTask("conf.life_chatty", { maxAttempts: 1 }, async (_payload: unknown, tools) => {
        for (let i = 0; i < DEFAULT_JOB_LOG_LINES + 5; i++) tools.log.info(`line ${i}`);
        throw new Error("stop");
      });
      const job = makeJob({ task: "conf.life_chatty", maxAttempts: 1 });
      await backend.enqueue({ jobs: [job] });
      workers.push(startTestWorker({ backend, tasks: [task], concurrency: 1, pollIntervalMs: 100, workerId: WORKER_ID }));
      const dead: JobInfo = await eventually("the dead letter", async () => {
        const info = await backend.getJob({ id: job.id });
        return info?.state === "dead" ? info : undefined;
      });
      const [attempt] = dead.attempts!;
      expect(attempt!.logs).toHaveLength(DEFAULT_JOB_LOG_LINES);
      expect(attempt!.logs.at(-1)!.message).toBe(`line ${DEFAULT_JOB_LOG_LINES - 1}`);
      expect(attempt!.logsDropped).toBe(5);
    });

    if (factory.capabilities.keepsFinished !== false) {
      it("lists completed jobs by the time they finished, newest first, each with its duration", async () => {
        let releaseSlow!: () => void;
        const slowMayEnd = new Promise<void>((resolve) => (releaseSlow = resolve));
        const task = defineTask("conf.life_order", async (payload: { slow: boolean }) => {
          if (payload.slow) await slowMayEnd;
        });
        // Made first, finished last: creation order and finish order disagree.
        const slow = makeJob({ task: "conf.life_order", payload: { slow: true } });
        const fast = makeJob({ task: "conf.life_order", payload: { slow: false } });
        await backend.enqueue({ jobs: [slow, fast] });
        workers.push(startTestWorker({ backend, tasks: [task], concurrency: 2, pollIntervalMs: 100, workerId: WORKER_ID }));
        await eventually("the fast job completed", async () => (await backend.getJob({ id: fast.id }))?.state === "completed");
        releaseSlow();
        const page = await eventually("both listed", async () => {
          const listed = await backend.listJobs({ state: "completed", order: "newest", task: "conf.life_order", limit: 10 });
          return listed.rows.length === 2 ? listed : undefined;
        });
        expect(page.rows.map((r) => r.job.id)).toEqual([slow.id, fast.id]);
        for (const row of page.rows) {
          expect(row.durationMs).toBeGreaterThanOrEqual(0);
          expect(typeof row.finishedAt).toBe("string");
        }
      });
    }

    if (factory.capabilities.flows) {
      it("gives each step of a flow its duration, from its attempt's record", async () => {
        const task = defineTask("conf.life_step", async () => ({ done: true }));
        const flow = planFlow({ steps: { a: makeJob({ task: "conf.life_step" }), b: { job: makeJob({ task: "conf.life_step" }), after: ["a"] } } });
        await backend.enqueueFlow({ flow });
        workers.push(startTestWorker({ backend, tasks: [task], concurrency: 2, pollIntervalMs: 100, workerId: WORKER_ID }));
        const detail = await eventually("the flow completed", async () => {
          const found = await backend.getFlow({ id: flow.id });
          return found?.state === "completed" ? found : undefined;
        });
        for (const step of Object.values(detail.steps)) {
          expect(step.durationMs).toBeGreaterThanOrEqual(0);
          expect(Date.parse(step.startedAt!)).toBeLessThanOrEqual(Date.parse(step.finishedAt!) + 1000);
        }
      });
    }

    it("refuses a progress that is neither a percentage nor a small object, failing the attempt", async () => {
      const task = defineTask("conf.life_bad", { maxAttempts: 1 }, async (_payload: unknown, tools) => {
        tools.progress(150);
      });
      const job = makeJob({ task: "conf.life_bad", maxAttempts: 1 });
      await backend.enqueue({ jobs: [job] });
      workers.push(startTestWorker({ backend, tasks: [task], concurrency: 1, pollIntervalMs: 100, workerId: WORKER_ID }));
      const dead = await eventually("the dead letter", async () => {
        const info = await backend.getJob({ id: job.id });
        return info?.state === "dead" ? info : undefined;
      });
      expect(dead.job.errors.at(-1)?.message).toMatch(/tools\.progress: a number must be from 0 to 100, got 150/);
    });
  });
}
