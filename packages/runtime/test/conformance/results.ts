import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import type { JobInfo, QueueBackend } from "../../src/core/queue-backend.js";
import { RetainedState } from "../../src/core/retention.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, expectOwnCapabilities, makeJob, startTestWorker, WORKER, type BackendFactory } from "./harness.js";

/** What a result larger than this test's max_result_bytes is made of. */
const MAX_RESULT_BYTES = 100;

/** The handler's return value by the job's payload. */
const RETURNS: Record<string, () => unknown> = {
  object: () => ({ total: 12.5, lines: ["a", "é"], paid: true }),
  nothing: () => undefined,
  large: () => ({ text: "x".repeat(MAX_RESULT_BYTES) }),
  bigint: () => ({ cents: 1250n }),
};

/**
 * Results (docs/tasks.md#results): a handler's return value is stored with its completed job, in the same write,
 * where the backend keeps finished jobs; too large or not JSON, the job completes and says why. It goes with the
 * job when retention prunes it.
 */
export function describeResults(factory: BackendFactory): void {
  describe(`${factory.name}: results`, () => {
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

    /** Runs one job per kind of return value through a worker; the jobs' ids by kind once every handler returned. */
    async function runAll(): Promise<Record<string, string>> {
      const ran = new Set<string>();
      const returning = defineTask("conf.result", async (payload: { kind: string }) => {
        ran.add(payload.kind);
        return RETURNS[payload.kind]!();
      });
      const jobs = Object.keys(RETURNS).map((kind) => makeJob({ task: "conf.result", payload: { kind } }));
      await backend.enqueue({ jobs });
      workers.push(startTestWorker({ backend, tasks: [returning], concurrency: 4, pollIntervalMs: 500, maxResultBytes: MAX_RESULT_BYTES }));
      await eventually("every handler returned", async () => ran.size === jobs.length);
      return Object.fromEntries(jobs.map((job) => [(job.payload as { kind: string }).kind, job.id]));
    }

    if (factory.capabilities.keepsFinished === false) {
      it("stores no result: a completed job is not kept, so getJob finds it nowhere", async () => {
        const ids = await runAll();
        await eventually("an empty queue", async () => {
          const d = await backend.depths();
          return d.ready + d.running + d.scheduled + d.dead === 0;
        });
        for (const id of Object.values(ids)) {
          // Not running here, not a dead letter: RabbitMQ cannot say more about the id (docs/rabbitmq.md#limits).
          await expect(backend.getJob({ id })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        }
      });
      return;
    }

    async function completed(id: string): Promise<JobInfo> {
      return eventually(`job ${id} completed`, async () => {
        const info = await backend.getJob({ id });
        return info?.state === "completed" ? info : undefined;
      });
    }

    it("stores what a handler returned with its completed job, and nothing when it returned nothing", async () => {
      const ids = await runAll();
      const object = await completed(ids.object!);
      expect(object.result).toEqual({ total: 12.5, lines: ["a", "é"], paid: true });
      expect(object.resultOmitted).toBeUndefined();
      const nothing = await completed(ids.nothing!);
      expect("result" in nothing).toBe(false);
      expect(nothing.resultOmitted).toBeUndefined();
    });

    it("completes a job whose result is too large or not JSON, and says why it stored none", async () => {
      const ids = await runAll();
      const large = await completed(ids.large!);
      expect(large.result).toBeUndefined();
      expect(large.resultOmitted).toMatch(/bytes of JSON, more than \[plugin\.queue\] max_result_bytes \(100\)/);
      const bigint = await completed(ids.bigint!);
      expect(bigint.result).toBeUndefined();
      expect(bigint.resultOmitted).toMatch(/not JSON/);
    });

    it("writes each job's own result when completions are written together, and null as a result", async () => {
      const jobs = Array.from({ length: 4 }, (_, i) => makeJob({ payload: { i } }));
      await backend.enqueue({ jobs });
      const claimed = await backend.claim({ workerId: WORKER, limit: 4, leaseMs: 30_000 });
      expect(claimed).toHaveLength(4);
      const results = [{ value: { i: 0, text: "nul \u0000 and more" } }, undefined, { value: null }, { omitted: "why" }];
      await Promise.all(claimed.map((job, i) => backend.complete({ workerId: WORKER, job, result: results[(job.payload as { i: number }).i] })));
      const infos = await Promise.all(jobs.map((job) => completed(job.id)));
      expect(infos.map((info) => [info.result, info.resultOmitted])).toEqual([
        // PostgreSQL's jsonb holds no NUL character: it is stored as U+FFFD, as in a recorded error.
        [{ i: 0, text: expect.stringMatching(/^nul (\u0000|\ufffd) and more$/) }, undefined],
        [undefined, undefined],
        [null, undefined],
        [undefined, "why"],
      ]);
      expect("result" in infos[2]!).toBe(true);
    });

    it("does not store the result of a completion that is no longer its worker's", async () => {
      const job = makeJob();
      await backend.enqueue({ jobs: [job] });
      await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      await backend.complete({ workerId: "another-worker", job, result: { value: "late" } });
      const info = await backend.getJob({ id: job.id });
      expect(info?.state).toBe("running");
      expect(info?.result).toBeUndefined();
    });

    it("lets a result go with its job when retention prunes it", async () => {
      const job = makeJob();
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      await backend.complete({ workerId: WORKER, job: claimed!, result: { value: { kept: "until pruned" } } });
      expect((await completed(job.id)).result).toEqual({ kept: "until pruned" });
      expect(await backend.prune({ state: RetainedState.completed, select: { keepNewest: 0 }, limit: 10 })).toBe(1);
      expect(await backend.getJob({ id: job.id })).toBeNull();
    });
  });
}
