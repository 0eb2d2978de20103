import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { checkDebouncedTasks } from "../../src/queue/debounce-check.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, expectOwnCapabilities, makeJob, sleep, startTestWorker, type BackendFactory } from "./harness.js";

/**
 * Debounce (docs/flow-control.md#debounce): jobs of one key enqueued while one of them waits become that one job, with
 * the last payload, starting `delayMs` after the last enqueue and at most `maxWaitMs` after the first; two processes
 * enqueueing at once still make one job.
 */
export function describeDebounce(factory: BackendFactory): void {
  describe(`${factory.name}: debounce`, () => {
    let backend: QueueBackend;
    let peer: QueueBackend;
    let cleanup: () => Promise<void>;
    const workers: Worker[] = [];

    beforeEach(async () => {
      const created = await factory.create();
      ({ backend, cleanup } = created);
      // Another process on the same queue where the backend has one (PostgreSQL, Redis); else the same backend.
      peer = created.peer ? await created.peer() : backend;
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      await cleanup();
    });

    const task = defineTask("conf.reindex", { debounce: { key: (p: { doc: string }) => p.doc, delayMs: 300 } }, async () => undefined);

    if (!factory.capabilities.debounce) {
      it("refuses a debounced task at start with NOT_SUPPORTED, naming the task and the reason", () => {
        let refused: unknown;
        try {
          checkDebouncedTasks([task], backend, "default");
        } catch (error) {
          refused = error;
        }
        expect(refused).toMatchObject({ code: "NOT_SUPPORTED", message: expect.stringContaining('task "conf.reindex" debounces its jobs') });
        expect((refused as Error).message).toContain("a message waiting in the broker can be neither found by its key nor changed");
      });
      return;
    }

    /** A job as QueueProvider.prepare makes one for a task with `debounce`. */
    function debounced(payload: { doc: string; n: number }, delayMs = 300, maxWaitMs: number | null = null, tenantId: string | null = null): Job {
      const job = makeJob({ task: "conf.reindex", payload, tenantId });
      job.debounce = { key: payload.doc, delayMs, maxWaitMs };
      job.availableAt = new Date(job.createdAt.getTime() + delayMs);
      return job;
    }

    function startWorker(tasks: TaskDefinition[]): Worker {
      const worker = startTestWorker({ backend, tasks, concurrency: 4, pollIntervalMs: 100 });
      workers.push(worker);
      return worker;
    }

    it("jobs of one key enqueued while one waits become that job: one run, with the last payload", async () => {
      const ran: Array<{ id: string; payload: unknown }> = [];
      const t = defineTask("conf.reindex", async (payload, { job }) => {
        ran.push({ id: job.id, payload });
      });
      const first = debounced({ doc: "a", n: 1 });
      expect(await backend.enqueue({ jobs: [first] })).toEqual({ inserted: [first.id] });
      let lastAt = 0;
      // Taking turns between two processes, each enqueue after the one before.
      for (let n = 2; n <= 5; n++) {
        const job = debounced({ doc: "a", n });
        lastAt = Date.now();
        const result = await (n % 2 === 0 ? peer : backend).enqueue({ jobs: [job] });
        expect(result).toEqual({ inserted: [], duplicates: new Map([[job.id, first.id]]) });
      }
      const other = debounced({ doc: "b", n: 1 });
      expect(await backend.enqueue({ jobs: [other] })).toEqual({ inserted: [other.id] });

      const stored = await backend.getJob({ id: first.id });
      expect(stored?.job.payload).toEqual({ doc: "a", n: 5 });
      // Its start moved to delayMs after the last enqueue.
      expect(Date.parse(stored!.job.availableAt)).toBeGreaterThanOrEqual(lastAt + 300 - 50);

      startWorker([t]);
      await eventually("both keys ran", async () => ran.length === 2);
      await sleep(400);
      expect(ran).toHaveLength(2);
      expect(ran.find((r) => r.id === first.id)?.payload).toEqual({ doc: "a", n: 5 });
      expect(ran.find((r) => r.id === other.id)?.payload).toEqual({ doc: "b", n: 1 });
    });

    it("two processes enqueueing one key at the same moment make one job", async () => {
      const jobs = Array.from({ length: 20 }, (_, i) => debounced({ doc: "c", n: i }, 2000));
      const results = await Promise.all(jobs.map((job, i) => (i % 2 === 0 ? backend : peer).enqueue({ jobs: [job] })));
      const inserted = results.flatMap((r) => r.inserted);
      expect(inserted).toHaveLength(1);
      const holder = inserted[0]!;
      for (const [i, result] of results.entries()) {
        if (result.inserted.length === 0) expect(result.duplicates?.get(jobs[i]!.id)).toBe(holder);
      }
      const stored = await backend.getJob({ id: holder });
      expect(jobs.map((j) => j.payload)).toContainEqual(stored?.job.payload);
      const depths = await backend.depths();
      expect(depths.ready + depths.scheduled).toBe(1);
    });

    it("maxWaitMs bounds the start: at most that long after the first enqueue", async () => {
      const first = debounced({ doc: "d", n: 1 }, 300, 500);
      await backend.enqueue({ jobs: [first] });
      await sleep(300);
      // Its start would be 300 ms from now, past first + 500: it stays at first + 500.
      await peer.enqueue({ jobs: [debounced({ doc: "d", n: 2 }, 300, 500)] });
      const stored = await backend.getJob({ id: first.id });
      expect(stored?.job.payload).toEqual({ doc: "d", n: 2 });
      expect(Date.parse(stored!.job.availableAt)).toBe(first.createdAt.getTime() + 500);
    });

    it("once the key's job has started, the next enqueue makes a new job; keys are per tenant", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const ran: unknown[] = [];
      const t = defineTask("conf.reindex", async (payload) => {
        ran.push(payload);
        await held;
      });
      const first = debounced({ doc: "e", n: 1 }, 0);
      await backend.enqueue({ jobs: [first] });
      startWorker([t]);
      await eventually("the first job started", async () => ran.length === 1);
      const second = debounced({ doc: "e", n: 2 }, 0);
      expect(await peer.enqueue({ jobs: [second] })).toEqual({ inserted: [second.id] });
      const ofAcme = debounced({ doc: "e", n: 3 }, 0, null, "acme");
      // Another tenant's key is its own, whatever waits under the same key without a tenant.
      expect(await backend.enqueue({ jobs: [ofAcme] })).toEqual({ inserted: [ofAcme.id] });
      release();
      await eventually("every job ran", async () => ran.length >= 3);
      expect(ran).toEqual(expect.arrayContaining([{ doc: "e", n: 1 }, { doc: "e", n: 2 }, { doc: "e", n: 3 }]));
    });
  });
}
