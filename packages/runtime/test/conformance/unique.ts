import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import type { UniqueInit } from "../../src/core/unique.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep, startTestWorker, type BackendFactory, expectOwnCapabilities } from "./harness.js";

function uniqueJob(unique: UniqueInit, init: Parameters<typeof makeJob>[0] = {}): Job {
  return makeJob({ task: "conf.unique", ...init, unique });
}

/** Unique jobs (docs/tasks.md#unique-jobs): one job per key, scoped by task and tenant, across processes. */
export function describeUnique(factory: BackendFactory): void {
  describe(`${factory.name}: unique jobs`, () => {
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

    function startWorker(tasks: TaskDefinition[]): Worker {
      const worker = startTestWorker({ backend, tasks, concurrency: 4, pollIntervalMs: 200 });
      workers.push(worker);
      return worker;
    }

    async function waiting(): Promise<number> {
      const depths = await backend.depths();
      return depths.ready + depths.scheduled;
    }

    if (factory.capabilities.unique === false) {
      it("refuses a unique job with NOT_SUPPORTED, naming the database plugin (a broker cannot hold a key)", async () => {
        const plain = makeJob();
        await expect(backend.enqueue({ jobs: [plain, uniqueJob({ key: "k" })] })).rejects.toMatchObject({
          code: "NOT_SUPPORTED",
          hint: expect.stringContaining("database") as unknown,
        });
        // Plain jobs are not affected.
        expect((await backend.enqueue({ jobs: [makeJob()] })).inserted).toHaveLength(1);
      });
      return;
    }

    it("a second job of a key while the first waits is a duplicate: not added, the holder's id answered", async () => {
      const first = uniqueJob({ key: "report:42" });
      const second = uniqueJob({ key: "report:42" });
      expect(await backend.enqueue({ jobs: [first] })).toEqual({ inserted: [first.id] });
      const again = await backend.enqueue({ jobs: [second] });
      expect(again.inserted).toEqual([]);
      expect(again.duplicates?.get(second.id)).toBe(first.id);
      expect(await waiting()).toBe(1);
      // The same job enqueued again is the usual no-op, not a duplicate of itself.
      const same = await backend.enqueue({ jobs: [first] });
      expect(same.inserted).toEqual([]);
      expect(same.duplicates?.has(first.id) ?? false).toBe(false);
    });

    it("a key is scoped by task and by tenant", async () => {
      const jobs = [
        uniqueJob({ key: "k" }),
        uniqueJob({ key: "k" }, { task: "conf.unique_other" }),
        uniqueJob({ key: "k" }, { tenantId: "acme" }),
        uniqueJob({ key: "k" }, { tenantId: "globex" }),
      ];
      const result = await backend.enqueue({ jobs });
      expect(result.inserted).toEqual(jobs.map((j) => j.id));
      expect(result.duplicates).toBeUndefined();
      const dup = uniqueJob({ key: "k" }, { tenantId: "acme" });
      expect((await backend.enqueue({ jobs: [dup] })).duplicates?.get(dup.id)).toBe(jobs[2]!.id);
    });

    it("in one batch, a later job of a key is a duplicate of the first; plain jobs beside them are added", async () => {
      const plain = makeJob();
      const first = uniqueJob({ key: "batch" });
      const later = uniqueJob({ key: "batch" });
      const result = await backend.enqueue({ jobs: [first, plain, later] });
      expect(result.inserted).toEqual([first.id, plain.id]);
      expect([...(result.duplicates ?? new Map<string, string>())]).toEqual([[later.id, first.id]]);
    });

    it("a key held by state is free again once its job completed, unless completed is one of its states", async () => {
      const ran: string[] = [];
      startWorker([defineTask("conf.unique", async (_p, { job }) => void ran.push(job.id))]);
      const first = uniqueJob({ key: "free" });
      const keeper = uniqueJob({ key: "kept", states: ["ready", "running", "completed"] });
      await backend.enqueue({ jobs: [first, keeper] });
      await eventually("both ran", async () => ran.length === 2);
      const next = uniqueJob({ key: "free" });
      // A completion may be written a moment after the handler returned (batched): until then, a duplicate.
      await eventually("the key is free", async () => {
        const result = await backend.enqueue({ jobs: [next] });
        if (result.inserted.length === 0) expect(result.duplicates?.get(next.id)).toBe(first.id);
        return result.inserted.length === 1;
      });
      const blocked = uniqueJob({ key: "kept", states: ["ready", "running", "completed"] });
      expect((await backend.enqueue({ jobs: [blocked] })).duplicates?.get(blocked.id)).toBe(keeper.id);
    });

    it("a key held for a period stays held after its job ran, and is free once the period passed", async () => {
      const ran: string[] = [];
      startWorker([defineTask("conf.unique", async (_p, { job }) => void ran.push(job.id))]);
      const first = uniqueJob({ key: "minute", periodMs: 1500 });
      const started = Date.now();
      await backend.enqueue({ jobs: [first] });
      await eventually("it ran", async () => ran.length === 1);
      const second = uniqueJob({ key: "minute", periodMs: 1500 });
      const during = await backend.enqueue({ jobs: [second] });
      // Unless this machine was slow enough for the period to pass already.
      if (Date.now() - started < 1400) expect(during.duplicates?.get(second.id)).toBe(first.id);
      await sleep(Math.max(0, started + 1500 - Date.now()));
      // The period is counted from the backend's clock at the enqueue, which may lag this one by a moment.
      const third = uniqueJob({ key: "minute", periodMs: 1500 });
      await eventually("the period passed", async () => (await backend.enqueue({ jobs: [third] })).inserted.length === 1, 5000);
    });

    if (factory.capabilities.cancellation !== false) {
      it("a cancelled job's key is free again", async () => {
        const first = uniqueJob({ key: "cancel" });
        await backend.enqueue({ jobs: [first] });
        await backend.cancel({ id: first.id });
        const next = uniqueJob({ key: "cancel" });
        expect((await backend.enqueue({ jobs: [next] })).inserted).toEqual([next.id]);
      });
    }

    it("twenty concurrent enqueues of one key make exactly one job", async () => {
      const peers = peer ? await Promise.all(Array.from({ length: 4 }, () => peer!())) : [backend];
      const jobs = Array.from({ length: 20 }, () => uniqueJob({ key: "race" }));
      const results = await Promise.all(jobs.map((job, i) => peers[i % peers.length]!.enqueue({ jobs: [job] })));
      const inserted = results.flatMap((r) => r.inserted);
      expect(inserted).toHaveLength(1);
      for (const [i, result] of results.entries()) {
        if (result.inserted.length === 0) expect(result.duplicates?.get(jobs[i]!.id)).toBe(inserted[0]);
      }
      expect(await waiting()).toBe(1);
    });
  });
}
