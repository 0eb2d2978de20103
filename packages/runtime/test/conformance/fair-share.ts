import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorToAttempt, type Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskLimits } from "../../src/core/limits.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import { makeJob, type BackendFactory, expectOwnCapabilities } from "./harness.js";

const FAIR = "conf.fair";

function tenantJob(tenant: string, i: number): Job {
  const job = makeJob({ task: FAIR, payload: { i }, tenantId: tenant });
  // What QueueProvider.prepare fills in for `fairness: "tenant"`.
  job.limitKey = tenant;
  return job;
}

const fair = (weights: Record<string, number> = {}): Map<string, TaskLimits> => new Map([[FAIR, { concurrency: null, rateLimit: null, fair: { weights } }]]);

/**
 * Fair share across keys (docs/flow-control.md#fair-share-across-keys): due jobs of a task with `fairness` are
 * claimed round robin across keys, weighted, by every claimer of the queue (peers stand for other processes).
 * `factory.capabilities.fairShare === false`: the backend refuses the task with NOT_SUPPORTED when it is declared.
 */
export function describeFairShare(factory: BackendFactory): void {
  describe(`${factory.name}: fair share across keys`, () => {
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

    if (!factory.capabilities.fairShare) {
      it("refuses a task with fairness with NOT_SUPPORTED, naming the reason", async () => {
        const error = await backend.setLimits({ limits: fair() }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(JfastError);
        expect((error as JfastError).code).toBe("NOT_SUPPORTED");
        expect((error as JfastError).message).toContain("fairness");
      });
      return;
    }

    it("starts all of tenant B's 10 jobs before tenant A's next 100, behind 20 000 of A's, at any claim size and across claimers", async () => {
      const all = [backend];
      if (peer) all.push(await peer());
      for (const b of all) await b.setLimits({ limits: fair() });
      for (let from = 0; from < 20_000; from += 2_000) {
        await backend.enqueue({ jobs: Array.from({ length: 2_000 }, (_, i) => tenantJob("a", from + i)) });
      }
      // Some of A's start before B arrives, as they would in a running service.
      const early = await backend.claim({ workerId: "fair-0", limit: 5, leaseMs: 60_000 });
      expect(early.every((j) => j.tenantId === "a")).toBe(true);
      await backend.enqueue({ jobs: Array.from({ length: 10 }, (_, i) => tenantJob("b", i)) });
      let startedA = 0;
      let startedB = 0;
      const sizes = [1, 3, 1, 7, 2, 1, 5, 1, 1, 4];
      for (let round = 0; startedB < 10 && round < 200; round++) {
        const b = all[round % all.length]!;
        const jobs = await b.claim({ workerId: `fair-${round % all.length}`, limit: sizes[round % sizes.length]!, leaseMs: 60_000 });
        for (const job of jobs) {
          if (job.tenantId === "b") startedB++;
          else startedA++;
        }
      }
      expect(startedB).toBe(10);
      expect(startedA).toBeLessThan(100);
    }, 120_000);

    it("claims a fair task's jobs for the buffer too (its starts count nothing), a fair task with a limit only for free slots, and never holds other tasks' jobs back", async () => {
      await backend.setLimits({ limits: new Map([...fair(), ["conf.fair-capped", { concurrency: 50, rateLimit: null, fair: { weights: {} } }]]) });
      await backend.enqueue({ jobs: Array.from({ length: 30 }, (_, i) => tenantJob(`t${i % 3}`, i)) });
      const buffered = await backend.claim({ workerId: "fair-buf", limit: 12, leaseMs: 60_000, startable: 2 });
      expect(buffered).toHaveLength(12);
      // Round robin over the three keys within the claim.
      expect(new Set(buffered.slice(0, 3).map((j) => j.tenantId)).size).toBe(3);
      const capped = Array.from({ length: 10 }, (_, i) => {
        const job = makeJob({ task: "conf.fair-capped", payload: { i }, tenantId: "c" });
        job.limitKey = "c";
        return job;
      });
      await backend.enqueue({ jobs: capped });
      await backend.enqueue({ jobs: Array.from({ length: 2 }, (_, i) => makeJob({ task: "conf.plain", payload: { i } })) });
      const claimed: Job[] = [];
      for (let round = 0; round < 2; round++) claimed.push(...(await backend.claim({ workerId: "fair-buf", limit: 4, leaseMs: 60_000, startable: 1 })));
      expect(claimed).toHaveLength(8);
      // The fair task's backlog (18 left) did not keep the plain jobs waiting over two claims.
      expect(claimed.filter((j) => j.task === "conf.plain")).toHaveLength(2);
      // The capped task's start counts: at most one per claim, the one free slot.
      expect(claimed.filter((j) => j.task === "conf.fair-capped").length).toBeLessThanOrEqual(2);
    });

    it("alternates between keys when every claim takes one job, a newcomer included", async () => {
      await backend.setLimits({ limits: fair() });
      await backend.enqueue({ jobs: Array.from({ length: 30 }, (_, i) => tenantJob("a", i)) });
      for (let i = 0; i < 5; i++) expect((await backend.claim({ workerId: "fair-1", limit: 1, leaseMs: 60_000 }))[0]?.tenantId).toBe("a");
      await backend.enqueue({ jobs: Array.from({ length: 5 }, (_, i) => tenantJob("b", i)) });
      const next: string[] = [];
      for (let i = 0; i < 10; i++) for (const job of await backend.claim({ workerId: "fair-1", limit: 1, leaseMs: 60_000 })) next.push(job.tenantId!);
      expect(next.filter((t) => t === "b")).toHaveLength(5);
    });

    it("serves a key again once its earlier jobs ran, and a key's dead job once it is retried", async () => {
      await backend.setLimits({ limits: fair() });
      await backend.enqueue({ jobs: [tenantJob("a", 0), tenantJob("b", 0)] });
      const first = await backend.claim({ workerId: "fair-r", limit: 5, leaseMs: 60_000 });
      expect(first.map((j) => j.tenantId).sort()).toEqual(["a", "b"]);
      const b = first.find((j) => j.tenantId === "b")!;
      await backend.complete({ workerId: "fair-r", job: first.find((j) => j.tenantId === "a")! });
      await backend.kill({ workerId: "fair-r", job: b, error: errorToAttempt(new Error("gave up"), b.attempts) });
      // No key has an open job: the claim finds none (and may forget the keys).
      expect(await backend.claim({ workerId: "fair-r", limit: 5, leaseMs: 60_000 })).toEqual([]);
      await backend.enqueue({ jobs: [tenantJob("a", 1)] });
      expect((await backend.retryDead({ ids: [b.id] })).retried).toEqual([b.id]);
      // A job back through the ready list may first be put on its key's list (Redis), to start with the next claim.
      const again: Job[] = [];
      for (let round = 0; round < 3 && again.length < 2; round++) again.push(...(await backend.claim({ workerId: "fair-r", limit: 5, leaseMs: 60_000 })));
      expect(again.map((j) => j.tenantId).sort()).toEqual(["a", "b"]);
    });

    it("starts a delayed job and a retry of a key once due among the keys waiting, not behind another key's backlog", async () => {
      await backend.setLimits({ limits: fair() });
      const delayed = tenantJob("b", 0);
      delayed.availableAt = new Date(Date.now() + 300);
      await backend.enqueue({ jobs: [delayed, tenantJob("c", 0)] });
      await backend.enqueue({ jobs: Array.from({ length: 200 }, (_, i) => tenantJob("a", i)) });
      // C's job and A's first ones start; C's fails and backs off for 300 ms.
      const first = await backend.claim({ workerId: "fair-d", limit: 4, leaseMs: 60_000 });
      expect(first.map((j) => j.tenantId)).toContain("c");
      expect(first.map((j) => j.tenantId)).not.toContain("b");
      const c = first.find((j) => j.tenantId === "c")!;
      await backend.retry({ workerId: "fair-d", job: c, error: errorToAttempt(new Error("flaky"), c.attempts), availableAt: new Date(Date.now() + 300) });
      for (const job of first) if (job !== c) await backend.complete({ workerId: "fair-d", job });
      await new Promise((resolve) => setTimeout(resolve, 450));
      // Both are due now: each takes its key's next turn, level with A's, so both start within a few of A's.
      const next: string[] = [];
      for (let round = 0; round < 6 && (!next.includes("b") || !next.includes("c")); round++) {
        for (const job of await backend.claim({ workerId: "fair-d", limit: 2, leaseMs: 60_000 })) next.push(job.tenantId!);
      }
      expect(next).toContain("b");
      expect(next).toContain("c");
      expect(next.filter((t) => t === "a").length).toBeLessThanOrEqual(4);
    });

    it("gives a key of weight 2 two turns to another key's one", async () => {
      await backend.setLimits({ limits: fair({ a: 2 }) });
      await backend.enqueue({ jobs: Array.from({ length: 40 }, (_, i) => tenantJob("a", i)) });
      await backend.enqueue({ jobs: Array.from({ length: 40 }, (_, i) => tenantJob("b", i)) });
      const started: string[] = [];
      for (let round = 0; round < 10; round++) {
        for (const job of await backend.claim({ workerId: "fair-w", limit: 3, leaseMs: 60_000 })) started.push(job.tenantId!);
      }
      expect(started).toHaveLength(30);
      const a = started.filter((t) => t === "a").length;
      expect(a).toBeGreaterThanOrEqual(18);
      expect(a).toBeLessThanOrEqual(22);
    });
  });
}
