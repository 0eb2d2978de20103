import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskLimits } from "../../src/core/limits.js";
import { defineTask } from "../../src/core/define-task.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, startTestWorker, type BackendFactory, expectOwnCapabilities } from "./harness.js";

const LIMITED = "conf.limited";
const OTHER = "conf.other";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Per-task limits (docs/tasks.md#limits): a concurrency cap and a rate limit held across every claimer of the
 * queue (several backends on one store stand for several processes: `peer`), jobs over a limit waiting with their
 * attempt unspent, and other tasks' jobs claimed past them. `factory.capabilities.limits === false`: the backend refuses limits
 * with NOT_SUPPORTED (RabbitMQ without a database).
 */
export function describeLimits(factory: BackendFactory): void {
  describe(`${factory.name}: task limits`, () => {
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

    /** The backend and `n - 1` peers (other processes' backends), each told the same limits. */
    async function claimers(n: number, limits: Map<string, TaskLimits>): Promise<QueueBackend[]> {
      const all = [backend];
      for (let i = 1; i < n && peer; i++) all.push(await peer());
      for (const b of all) await b.setLimits({ limits });
      return all;
    }

    if (factory.capabilities.limits === false) {
      it("refuses a limited task with NOT_SUPPORTED, naming what to enable", async () => {
        const error = await backend.setLimits({ limits: new Map([[LIMITED, { concurrency: 1, rateLimit: null }]]) }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(JfastError);
        expect((error as JfastError).code).toBe("NOT_SUPPORTED");
        expect((error as JfastError).hint).toContain("database");
        await expect(backend.setLimits({ limits: new Map() })).resolves.toBeUndefined();
      });
      return;
    }

    it("holds a concurrency cap across several concurrent claimers, and starts the next job when one ends", async () => {
      const all = await claimers(3, new Map([[LIMITED, { concurrency: 2, rateLimit: null }]]));
      await backend.enqueue({ jobs: Array.from({ length: 8 }, (_, i) => makeJob({ task: LIMITED, payload: { i } })) });
      const running: Array<{ job: Job; by: QueueBackend; worker: string }> = [];
      // Every claimer asks for more than the cap, at once, several rounds.
      for (let round = 0; round < 4; round++) {
        const results = await Promise.all(
          all.flatMap((b, i) => [0, 1].map(async (w) => ({ b, worker: `limits-${i}-${w}`, jobs: await b.claim({ workerId: `limits-${i}-${w}`, limit: 5, leaseMs: 30_000 }) }))),
        );
        for (const r of results) for (const job of r.jobs) running.push({ job, by: r.b, worker: r.worker });
        expect(running.length).toBeLessThanOrEqual(2);
        await sleep(50);
      }
      let most = running.length;
      await eventually("two jobs running", async () => {
        for (const [i, b] of all.entries()) for (const job of await b.claim({ workerId: `limits-${i}-0`, limit: 5, leaseMs: 30_000 })) running.push({ job, by: b, worker: `limits-${i}-0` });
        most = Math.max(most, running.length);
        return running.length >= 2;
      });
      expect(most).toBe(2);
      // A waiting job's attempt was never spent: each claimed job is on its first attempt.
      expect(running.map((r) => r.job.attempts)).toEqual([1, 1]);
      const first = running.shift()!;
      await first.by.complete({ workerId: first.worker, job: first.job });
      await eventually("a third job started after one completed", async () => {
        for (const [i, b] of all.entries()) for (const job of await b.claim({ workerId: `limits-${i}-1`, limit: 5, leaseMs: 30_000 })) running.push({ job, by: b, worker: `limits-${i}-1` });
        most = Math.max(most, running.length);
        return running.length >= 2;
      });
      await sleep(300);
      for (const [i, b] of all.entries()) for (const job of await b.claim({ workerId: `limits-${i}-1`, limit: 5, leaseMs: 30_000 })) running.push({ job, by: b, worker: `limits-${i}-1` });
      expect(running.length).toBe(2);
      expect(running.every((r) => r.job.attempts === 1)).toBe(true);
      const usage = await backend.limitUsage({ task: LIMITED });
      expect(usage.running).toBe(2);
    });

    it("claims other tasks' jobs past a task at its limit, in the same claim", async () => {
      await claimers(1, new Map([[LIMITED, { concurrency: 1, rateLimit: null }]]));
      await backend.enqueue({ jobs: Array.from({ length: 5 }, (_, i) => makeJob({ task: LIMITED, payload: { i } })) });
      await backend.enqueue({ jobs: Array.from({ length: 3 }, (_, i) => makeJob({ task: OTHER, payload: { i } })) });
      const claimed: Job[] = [];
      await eventually("one limited job and every other job", async () => {
        claimed.push(...(await backend.claim({ workerId: "limits-w", limit: 10, leaseMs: 30_000 })));
        return claimed.filter((j) => j.task === OTHER).length === 3 && claimed.some((j) => j.task === LIMITED);
      });
      await sleep(300);
      claimed.push(...(await backend.claim({ workerId: "limits-w", limit: 10, leaseMs: 30_000 })));
      expect(claimed.filter((j) => j.task === LIMITED)).toHaveLength(1);
    });

    it("holds a rate limit across claimers: at most max starts in any window", async () => {
      const perMs = 1000;
      const all = await claimers(2, new Map([[LIMITED, { concurrency: null, rateLimit: { max: 2, perMs } }]]));
      await backend.enqueue({ jobs: Array.from({ length: 5 }, (_, i) => makeJob({ task: LIMITED, payload: { i } })) });
      const starts: number[] = [];
      const deadline = Date.now() + 1800;
      while (Date.now() < deadline) {
        const results = await Promise.all(all.map((b, i) => b.claim({ workerId: `rate-${i}`, limit: 5, leaseMs: 30_000 })));
        for (const jobs of results) {
          for (const job of jobs) {
            starts.push(Date.now());
            expect(job.attempts).toBe(1);
            await all[results.indexOf(jobs)]!.complete({ workerId: `rate-${results.indexOf(jobs)}`, job });
          }
        }
        await sleep(40);
      }
      // Two in the first window, two more after it (the claims' own times: each start is recorded before its claim
      // returns, so two starts seen here closer than the window would be three within one).
      expect(starts.length).toBeGreaterThanOrEqual(3);
      expect(starts.length).toBeLessThanOrEqual(4);
      for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 2]!).toBeGreaterThan(perMs - 150);
    });

    it("runs a limited task through a worker with more slots than its cap, never above the cap", async () => {
      const limits = new Map([[LIMITED, { concurrency: 2, rateLimit: null }]]);
      await backend.setLimits({ limits });
      let now = 0;
      let most = 0;
      let done = 0;
      const limited = defineTask(LIMITED, { concurrency: 2 }, async () => {
        now++;
        most = Math.max(most, now);
        await sleep(60);
        now--;
        done++;
      });
      let others = 0;
      const other = defineTask(OTHER, async () => void others++);
      workers.push(startTestWorker({ backend, tasks: [limited, other], concurrency: 6, pollIntervalMs: 200 }));
      await backend.enqueue({ jobs: Array.from({ length: 8 }, (_, i) => makeJob({ task: LIMITED, payload: { i } })) });
      await backend.enqueue({ jobs: Array.from({ length: 4 }, (_, i) => makeJob({ task: OTHER, payload: { i } })) });
      await eventually("every job done", async () => done === 8 && others === 4, 30_000);
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBeGreaterThanOrEqual(1);
    });
  });
}
