import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { OnDead, TaskLimits } from "../../src/core/limits.js";
import { errorToAttempt } from "../../src/core/job.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import { eventually, makeJob, type BackendFactory, expectOwnCapabilities } from "./harness.js";

const ORDERED = "conf.ordered";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function orderedJob(key: string, i: number): Job {
  const job = makeJob({ task: ORDERED, payload: { key, i } });
  // What QueueProvider.prepare fills in from the task's orderedBy.
  job.limitKey = key;
  return job;
}

const label = (job: Job) => `${(job.payload as { key: string }).key}${(job.payload as { i: number }).i}`;
const ordered = (onDead: OnDead): Map<string, TaskLimits> => new Map([[ORDERED, { concurrency: null, rateLimit: null, ordered: { onDead } }]]);

/**
 * Order per key (docs/flow-control.md#order-per-key): one job of a key at a time, in enqueue order, across claimers
 * (peers stand for other processes) and across retries; a dead job holds its key's next jobs (onDead "block") until
 * skipped, or not ("skip"). `factory.capabilities.orderPerKey === false`: NOT_SUPPORTED when the task is declared.
 */
export function describeOrderPerKey(factory: BackendFactory): void {
  describe(`${factory.name}: order per key`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;
    let peer: (() => Promise<QueueBackend>) | undefined;

    beforeEach(async () => {
      ({ backend, cleanup, peer } = await factory.create());
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await cleanup();
    });

    if (!factory.capabilities.orderPerKey) {
      it("refuses a task with orderedBy with NOT_SUPPORTED, naming the reason", async () => {
        const error = await backend.setLimits({ limits: ordered("block") }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(JfastError);
        expect((error as JfastError).code).toBe("NOT_SUPPORTED");
        expect((error as JfastError).message).toContain("orderedBy");
      });
      return;
    }

    /** Claims on every claimer, a few rounds; what each started. */
    async function claimAll(all: QueueBackend[], rounds = 3): Promise<Array<{ job: Job; by: QueueBackend; worker: string }>> {
      const got: Array<{ job: Job; by: QueueBackend; worker: string }> = [];
      for (let round = 0; round < rounds; round++) {
        const results = await Promise.all(all.map(async (b, i) => ({ b, worker: `order-${i}`, jobs: await b.claim({ workerId: `order-${i}`, limit: 5, leaseMs: 30_000 }) })));
        for (const r of results) for (const job of r.jobs) got.push({ job, by: r.b, worker: r.worker });
        await sleep(30);
      }
      return got;
    }

    it("runs a key's jobs one at a time in enqueue order across claimers and retries, other keys not held", async () => {
      const all = [backend];
      if (peer) all.push(await peer());
      for (const b of all) await b.setLimits({ limits: ordered("block") });
      await backend.enqueue({ jobs: [orderedJob("a", 1), orderedJob("a", 2), orderedJob("a", 3), orderedJob("b", 1), orderedJob("b", 2)] });
      let running = await claimAll(all);
      expect(running.map((r) => label(r.job)).sort()).toEqual(["a1", "b1"]);
      // a1 fails: its retry holds a2 and a3 until it completes.
      const a1 = running.find((r) => label(r.job) === "a1")!;
      await a1.by.retry({ workerId: a1.worker, job: a1.job, error: errorToAttempt(new Error("flaky"), a1.job.attempts), availableAt: new Date(Date.now() + 400) });
      const b1 = running.find((r) => label(r.job) === "b1")!;
      await b1.by.complete({ workerId: b1.worker, job: b1.job });
      running = await claimAll(all);
      expect(running.map((r) => label(r.job))).toEqual(["b2"]);
      let again: { job: Job; by: QueueBackend; worker: string } | undefined;
      await eventually("a1 claimed again after its backoff", async () => {
        const got = await claimAll(all, 1);
        expect(got.every((r) => label(r.job) === "a1")).toBe(true);
        again = got[0];
        return again !== undefined;
      });
      expect(again!.job.attempts).toBe(2);
      await again!.by.complete({ workerId: again!.worker, job: again!.job });
      running = await claimAll(all);
      expect(running.map((r) => label(r.job))).toEqual(["a2"]);
    });

    it("holds a key behind a dead job until the key is skipped, and lists it as blocked", async () => {
      await backend.setLimits({ limits: ordered("block") });
      await backend.enqueue({ jobs: [orderedJob("a", 1), orderedJob("a", 2), orderedJob("b", 1)] });
      let running = await claimAll([backend], 1);
      expect(running.map((r) => label(r.job)).sort()).toEqual(["a1", "b1"]);
      const a1 = running.find((r) => label(r.job) === "a1")!;
      await backend.kill({ workerId: a1.worker, job: a1.job, error: errorToAttempt(new Error("broken"), a1.job.attempts) });
      running = await claimAll([backend], 2);
      expect(running).toEqual([]);
      const blocked = await backend.blockedKeys({ limit: 10 });
      expect(blocked).toEqual([expect.objectContaining({ task: ORDERED, key: "a", jobId: a1.job.id, waiting: 1 })]);
      expect(await backend.skipBlockedKey({ task: ORDERED, key: "a" })).toEqual({ skipped: [a1.job.id] });
      expect(await backend.blockedKeys({ limit: 10 })).toEqual([]);
      running = await claimAll([backend], 1);
      expect(running.map((r) => label(r.job))).toEqual(["a2"]);
    });

    it("goes on past a dead job with onDead \"skip\"", async () => {
      await backend.setLimits({ limits: ordered("skip") });
      await backend.enqueue({ jobs: [orderedJob("a", 1), orderedJob("a", 2)] });
      const [first] = await claimAll([backend], 1);
      expect(label(first!.job)).toBe("a1");
      await backend.kill({ workerId: first!.worker, job: first!.job, error: errorToAttempt(new Error("broken"), first!.job.attempts) });
      const next = await claimAll([backend], 1);
      expect(next.map((r) => label(r.job))).toEqual(["a2"]);
      expect(await backend.blockedKeys({ limit: 10 })).toEqual([]);
    });
  });
}
