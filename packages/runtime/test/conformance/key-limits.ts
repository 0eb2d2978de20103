import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskLimits } from "../../src/core/limits.js";
import { defineTask } from "../../src/core/define-task.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, startTestWorker, type BackendFactory, expectOwnCapabilities } from "./harness.js";

const KEYED = "conf.keyed";
const OTHER = "conf.other";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function keyedJob(key: string, i: number): Job {
  const job = makeJob({ task: KEYED, payload: { key, i } });
  // What QueueProvider.prepare fills in from the task's concurrency.key.
  job.limitKey = key;
  return job;
}

/**
 * Per-key concurrency (docs/flow-control.md#per-key-concurrency): at most `limit` jobs with one key running across
 * every claimer of the queue (peers stand for other processes), a job over its key's limit waiting with its attempt
 * unspent, and jobs of other keys and tasks claimed past it. `factory.capabilities.keyedLimits === false`: the
 * backend refuses the limit with NOT_SUPPORTED when it is declared (at start-up).
 */
export function describeKeyLimits(factory: BackendFactory): void {
  describe(`${factory.name}: per-key concurrency`, () => {
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

    const limits = (limit: number): Map<string, TaskLimits> => new Map([[KEYED, { concurrency: limit, rateLimit: null, perKey: true }]]);

    if (!factory.capabilities.keyedLimits) {
      it("refuses a task with per-key concurrency with NOT_SUPPORTED, naming the reason", async () => {
        const error = await backend.setLimits({ limits: limits(1) }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(JfastError);
        expect((error as JfastError).code).toBe("NOT_SUPPORTED");
        expect((error as JfastError).message).toContain("per-key concurrency");
      });
      return;
    }

    it("holds each key's cap across claimers, claims other keys and tasks past a key at its cap, and starts its next job when one ends", async () => {
      const all = [backend];
      if (peer) all.push(await peer());
      for (const b of all) await b.setLimits({ limits: limits(1) });
      // Key a's backlog first: key b's jobs and another task's come after it.
      await backend.enqueue({ jobs: Array.from({ length: 4 }, (_, i) => keyedJob("a", i)) });
      await backend.enqueue({ jobs: [keyedJob("b", 0), keyedJob("b", 1)] });
      await backend.enqueue({ jobs: [makeJob({ task: OTHER, payload: {} })] });
      const running: Array<{ job: Job; by: QueueBackend; worker: string }> = [];
      const claimRound = async (round: number) => {
        const results = await Promise.all(
          all.map(async (b, i) => ({ b, worker: `keys-${i}`, jobs: await b.claim({ workerId: `keys-${i}`, limit: 5, leaseMs: 30_000 }) })),
        );
        for (const r of results) for (const job of r.jobs) running.push({ job, by: r.b, worker: r.worker });
        const perKey = (key: string) => running.filter((r) => r.job.task === KEYED && (r.job.payload as { key: string }).key === key).length;
        expect(perKey("a"), `round ${round}`).toBeLessThanOrEqual(1);
        expect(perKey("b"), `round ${round}`).toBeLessThanOrEqual(1);
      };
      await eventually("one job of each key and the other task's", async () => {
        await claimRound(0);
        return running.length >= 3;
      });
      for (let round = 1; round < 4; round++) {
        await claimRound(round);
        await sleep(50);
      }
      expect(running.map((r) => (r.job.task === KEYED ? (r.job.payload as { key: string }).key : r.job.task)).sort()).toEqual([OTHER, "a", "b"].sort());
      // A waiting job's attempt was never spent.
      expect(running.every((r) => r.job.attempts === 1)).toBe(true);
      const a = running.find((r) => (r.job.payload as { key?: string }).key === "a")!;
      expect((a.job.payload as { i: number }).i).toBe(0);
      await a.by.complete({ workerId: a.worker, job: a.job });
      running.splice(running.indexOf(a), 1);
      await eventually("key a's next job started after its first completed", async () => {
        await claimRound(9);
        return running.some((r) => (r.job.payload as { key?: string }).key === "a");
      });
      const next = running.find((r) => (r.job.payload as { key?: string }).key === "a")!;
      expect((next.job.payload as { i: number }).i).toBe(1);
      expect(next.job.attempts).toBe(1);
    });

    it("holds a per-key rate limit across claimers: at most max starts of a key in any window, other keys not held", async () => {
      const perMs = 1000;
      const all = [backend];
      if (peer) all.push(await peer());
      for (const b of all) await b.setLimits({ limits: new Map([[KEYED, { concurrency: null, rateLimit: null, keyRate: { max: 2, perMs } }]]) });
      await backend.enqueue({ jobs: [...Array.from({ length: 5 }, (_, i) => keyedJob("a", i)), ...Array.from({ length: 5 }, (_, i) => keyedJob("b", i))] });
      const starts = new Map<string, number[]>([["a", []], ["b", []]]);
      const deadline = Date.now() + 1800;
      while (Date.now() < deadline) {
        const results = await Promise.all(all.map((b, i) => b.claim({ workerId: `krate-${i}`, limit: 5, leaseMs: 30_000 })));
        for (const [i, jobs] of results.entries()) {
          for (const job of jobs) {
            starts.get((job.payload as { key: string }).key)!.push(Date.now());
            expect(job.attempts).toBe(1);
            await all[i]!.complete({ workerId: `krate-${i}`, job });
          }
        }
        await sleep(40);
      }
      for (const [, times] of starts) {
        // Two in the first window for each key (neither holds the other), two more after it.
        expect(times.length).toBeGreaterThanOrEqual(3);
        expect(times.length).toBeLessThanOrEqual(4);
        // Times are taken here, after each claim returns: a loaded machine delays a return by up to a few hundred ms.
        for (let i = 2; i < times.length; i++) expect(times[i]! - times[i - 2]!).toBeGreaterThan(perMs - 300);
      }
    });

    it("runs keyed jobs through a worker with more slots than a key's cap, never above it, every key progressing", async () => {
      await backend.setLimits({ limits: limits(2) });
      const now = new Map<string, number>();
      let most = 0;
      let done = 0;
      const keyed = defineTask(KEYED, { concurrency: { key: (p: { key: string }) => p.key, limit: 2 } }, async (payload: { key: string }) => {
        const n = (now.get(payload.key) ?? 0) + 1;
        now.set(payload.key, n);
        most = Math.max(most, n);
        await sleep(40);
        now.set(payload.key, (now.get(payload.key) ?? 1) - 1);
        done++;
      });
      workers.push(startTestWorker({ backend, tasks: [keyed], concurrency: 8, pollIntervalMs: 200 }));
      await backend.enqueue({ jobs: ["a", "b", "c"].flatMap((key) => Array.from({ length: 5 }, (_, i) => keyedJob(key, i))) });
      await eventually("every job done", async () => done === 15, 30_000);
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBeGreaterThanOrEqual(1);
    });
  });
}
