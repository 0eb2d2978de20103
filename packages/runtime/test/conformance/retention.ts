import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { RetainedState } from "../../src/core/retention.js";
import { createLogger } from "../../src/observability/logger.js";
import { createPruner } from "../../src/queue/pruner.js";
import { makeJob, sleep, withMethod, WORKER, type BackendFactory, expectOwnCapabilities } from "./harness.js";

const ERROR = { attempt: 1, at: new Date(0).toISOString(), class: "Error", message: "boom" };
const silent = createLogger({ service: "test", level: "silent" });

/**
 * Retention (docs/queues.md#retention): a backend deletes finished jobs in bounded batches, oldest first, by age
 * or beyond the newest N, and one pruner at a time holds a queue's lease, across processes.
 */
export function describeRetention(factory: BackendFactory): void {
  describe(`${factory.name}: retention`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      while (cleanups.length) await cleanups.pop()!();
    });
    async function open(): Promise<{ backend: QueueBackend; peer?: () => Promise<QueueBackend> }> {
      const created = await factory.create();
      expectOwnCapabilities(factory, created.backend);
      cleanups.push(created.cleanup);
      return created;
    }

    /** Jobs enqueued, claimed one at a time and settled by `settle`, a few ms apart so each has its own time. */
    async function finish(backend: QueueBackend, count: number, settle: (job: Job) => Promise<unknown>): Promise<string[]> {
      const jobs = Array.from({ length: count }, (_, i) => makeJob({ payload: { i } }));
      await backend.enqueue({ jobs });
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const [job] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
        expect(job, `claim ${i + 1} of ${count}`).toBeDefined();
        await settle(job!);
        ids.push(job!.id);
        await sleep(5);
      }
      return ids;
    }
    const complete = (backend: QueueBackend) => (job: Job) => backend.complete({ workerId: WORKER, job });
    const kill = (backend: QueueBackend) => (job: Job) => backend.kill({ workerId: WORKER, job, error: ERROR });

    /** Prunes batch after batch of `limit` until one comes back short: the sizes of every batch. */
    async function pruneAll(backend: QueueBackend, params: Parameters<QueueBackend["prune"]>[0]): Promise<number[]> {
      const sizes: number[] = [];
      for (;;) {
        const deleted = await backend.prune(params);
        sizes.push(deleted);
        if (deleted < params.limit) return sizes;
      }
    }

    async function present(backend: QueueBackend, ids: readonly string[]): Promise<boolean[]> {
      return Promise.all(ids.map(async (id) => (await backend.getJob({ id })) !== null));
    }

    if (factory.capabilities.keepsFinished === false) {
      it("stores no completed or cancelled job, so there is none to prune", async () => {
        const { backend } = await open();
        await finish(backend, 2, complete(backend));
        for (const state of [RetainedState.completed, RetainedState.cancelled]) {
          expect(await backend.prune({ state, select: { keepNewest: 0 }, limit: 10 })).toBe(0);
          expect(await backend.prune({ state, select: { before: new Date(Date.now() + 60_000) }, limit: 10 })).toBe(0);
        }
      });
    } else {
      it("prunes completed jobs older than the cutoff in batches, and keeps the newer ones", async () => {
        const { backend } = await open();
        const old = await finish(backend, 5, complete(backend));
        await sleep(20);
        const cutoff = new Date();
        await sleep(20);
        const recent = await finish(backend, 2, complete(backend));
        expect(await pruneAll(backend, { state: RetainedState.completed, select: { before: cutoff }, limit: 2 })).toEqual([2, 2, 1]);
        expect(await present(backend, old)).toEqual(old.map(() => false));
        expect(await present(backend, recent)).toEqual([true, true]);
        expect((await backend.getJob({ id: recent[0]! }))?.state).toBe("completed");
      });

      it("keeps the newest N completed jobs when the retention is a count", async () => {
        const { backend } = await open();
        const ids = await finish(backend, 5, complete(backend));
        expect(await pruneAll(backend, { state: RetainedState.completed, select: { keepNewest: 2 }, limit: 2 })).toEqual([2, 1]);
        expect(await present(backend, ids)).toEqual([false, false, false, true, true]);
        expect(await backend.prune({ state: RetainedState.completed, select: { keepNewest: 2 }, limit: 2 })).toBe(0);
      });

      if (factory.capabilities.cancellation !== false && factory.capabilities.cancellation !== "recorded") {
        it("prunes cancelled jobs by age and by count, oldest first", async () => {
          const { backend } = await open();
          const jobs = Array.from({ length: 4 }, (_, i) => makeJob({ payload: { i } }));
          await backend.enqueue({ jobs });
          for (const job of jobs) {
            expect((await backend.cancel({ id: job.id })).cancelled).toBe(true);
            await sleep(5);
          }
          const ids = jobs.map((j) => j.id);
          expect(await pruneAll(backend, { state: RetainedState.cancelled, select: { keepNewest: 3 }, limit: 5 })).toEqual([1]);
          expect(await present(backend, ids)).toEqual([false, true, true, true]);
          expect(await pruneAll(backend, { state: RetainedState.cancelled, select: { before: new Date(Date.now() + 1000) }, limit: 2 })).toEqual([2, 1]);
          expect(await present(backend, ids)).toEqual([false, false, false, false]);
        });
      }
    }

    it("prunes dead letters older than the cutoff in batches, and keeps the newer ones", async () => {
      const { backend } = await open();
      const old = await finish(backend, 3, kill(backend));
      await sleep(20);
      const cutoff = new Date();
      await sleep(20);
      const recent = await finish(backend, 2, kill(backend));
      expect(await pruneAll(backend, { state: RetainedState.dead, select: { before: cutoff }, limit: 2 })).toEqual([2, 1]);
      expect((await backend.listDead({ limit: 10 })).map((d) => d.job.id)).toEqual([...recent].reverse());
      expect((await backend.depths()).dead).toBe(2);
      expect(old).toHaveLength(3);
    });

    it("keeps the newest N dead letters when the retention is a count", async () => {
      const { backend } = await open();
      const ids = await finish(backend, 4, kill(backend));
      expect(await pruneAll(backend, { state: RetainedState.dead, select: { keepNewest: 1 }, limit: 2 })).toEqual([2, 1]);
      expect((await backend.listDead({ limit: 10 })).map((d) => d.job.id)).toEqual([ids[3]]);
    });

    it("lets one pruner at a time hold the queue's lease, until it is released", async () => {
      const { backend, peer } = await open();
      const other = peer ? await peer() : backend;
      expect(await backend.claimPruner({ owner: "a", ttlMs: 30_000 })).toBe(true);
      expect(await other.claimPruner({ owner: "b", ttlMs: 30_000 })).toBe(false);
      // The holder claiming again (its next pass) keeps it.
      expect(await backend.claimPruner({ owner: "a", ttlMs: 30_000 })).toBe(true);
      await backend.releasePruner({ owner: "a" });
      expect(await other.claimPruner({ owner: "b", ttlMs: 30_000 })).toBe(true);
      expect(await backend.claimPruner({ owner: "a", ttlMs: 30_000 })).toBe(false);
      await other.releasePruner({ owner: "b" });
    });

    it("never lets two pruners (two processes where the backend has them) prune the queue at once", async () => {
      const { backend, peer } = await open();
      const other = peer ? await peer() : backend;
      await finish(backend, 12, kill(backend));
      let running = 0;
      let most = 0;
      const watched = (target: QueueBackend) =>
        withMethod(target, "prune", async (params) => {
          running++;
          most = Math.max(most, running);
          try {
            await sleep(10);
            return await target.prune(params);
          } finally {
            running--;
          }
        });
      const retention = { completed: { kind: "forever" }, cancelled: { kind: "forever" }, expired: { kind: "forever" }, dead: { kind: "count", count: 0 } } as const;
      const pruners = [backend, other].map((b, i) =>
        createPruner({ queues: [{ label: "q", backend: watched(b), retention }], intervalMs: 60_000, batch: 2, logger: silent, owner: `pruner-${i}` }),
      );
      try {
        const passes = await Promise.all([0, 1, 2].flatMap(() => pruners.map((p) => p.runOnce())));
        const pruned = passes.reduce((sum, pass) => sum + (pass.get("q")?.dead ?? 0), 0);
        expect(most).toBe(1);
        expect(pruned).toBe(12);
        expect((await backend.depths()).dead).toBe(0);
      } finally {
        for (const p of pruners) await p.stop();
      }
    });
  });
}
