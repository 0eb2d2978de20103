import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { workerState, type WorkerRecord, type WorkerStore } from "../../src/core/backend/workers.js";
import { defineTask } from "../../src/core/define-task.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, expectOwnCapabilities, makeJob, startTestWorker, withMethod, type BackendFactory } from "./harness.js";

/**
 * Short enough for a test, with room for a loaded machine's late timers: gone after 3 × 400 ms without a
 * heartbeat, forgotten after 4 s.
 */
const REGISTRY = { heartbeatMs: 400, forgetAfterMs: 4000 };

/**
 * The worker registry (docs/worker.md#the-worker-registry): each worker registers with the backend it consumes and
 * lists the jobs it runs; a clean stop removes it; one whose heartbeats stop is shown gone, then forgotten. A
 * backend without a place for it (RabbitMQ without the database) says NOT_SUPPORTED.
 */
export function describeWorkers(factory: BackendFactory): void {
  describe(`${factory.name}: worker registry`, () => {
    let backend: QueueBackend;
    let peer: QueueBackend;
    let cleanup: () => Promise<void>;
    const workers: Worker[] = [];
    beforeEach(async () => {
      const created = await factory.create();
      ({ backend, cleanup } = created);
      expectOwnCapabilities(factory, backend);
      peer = created.peer ? await created.peer() : backend;
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      await cleanup();
    });

    if (!factory.capabilities.workers) {
      it("refuses the registry with NOT_SUPPORTED, and its workers run without one", async () => {
        expect(() => backend.workerStore()).toThrow(expect.objectContaining({ code: "NOT_SUPPORTED" }));
        const ran: string[] = [];
        const task = defineTask("conf.registered", async () => void ran.push("ran"));
        workers.push(startTestWorker({ backend, tasks: [task], concurrency: 1, pollIntervalMs: 200, registry: REGISTRY }));
        await backend.enqueue({ jobs: [makeJob({ task: "conf.registered" })] });
        await eventually("the job ran", async () => ran.length === 1);
        expect(workers[0]!.presence).toBeNull();
      });
      return;
    }

    /** Every worker the registry lists, by id, with its state as a reader judges it now. */
    async function listed(): Promise<Map<string, WorkerRecord & { state: string }>> {
      const records = await backend.workerStore().list();
      return new Map(records.map((r) => [r.id, { ...r, state: workerState(r) }]));
    }

    it("lists two workers with what each runs; a stopped one leaves; a killed one is gone, then forgotten", async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = defineTask("conf.slow", async () => gate);
      const a = startTestWorker({ backend, tasks: [slow], concurrency: 2, pollIntervalMs: 200, workerId: "conf-worker-a", registry: REGISTRY });
      const b = startTestWorker({ backend: peer, tasks: [slow], concurrency: 3, pollIntervalMs: 200, workerId: "conf-worker-b", registry: REGISTRY });
      workers.push(a, b);
      const job = makeJob({ task: "conf.slow" });
      await backend.enqueue({ jobs: [job] });

      const both = await eventually("both workers listed, the job's runner with it", async () => {
        const now = await listed();
        const running = [...now.values()].filter((w) => w.running.includes(job.id));
        return now.has("conf-worker-a") && now.has("conf-worker-b") && running.length === 1 ? now : null;
      });
      const runner = [...both.values()].find((w) => w.running.includes(job.id))!;
      expect(runner.running).toEqual([job.id]);
      // When it started on that worker: after the worker did, and not after the heartbeat that listed it.
      expect(runner.runningSince).toHaveLength(1);
      expect(Date.parse(runner.runningSince[0]!)).toBeGreaterThanOrEqual(Date.parse(runner.startedAt));
      expect(Date.parse(runner.runningSince[0]!)).toBeLessThanOrEqual(Date.parse(runner.heartbeatAt));
      // The id is the job's lock holder: a running job links to its worker.
      expect((await backend.getJob({ id: job.id }).catch(() => null))?.lockedBy ?? runner.id).toBe(runner.id);
      for (const [id, concurrency] of [["conf-worker-a", 2], ["conf-worker-b", 3]] as const) {
        const w = both.get(id)!;
        expect(w).toMatchObject({ id, pid: process.pid, queue: "default", concurrency, state: "online", heartbeatMs: 400, forgetAfterMs: 4000 });
        expect(w.host.length).toBeGreaterThan(0);
        expect(w.version).toMatch(/^\d+\.\d+\.\d+/);
        expect(Date.parse(w.startedAt)).toBeLessThanOrEqual(Date.parse(w.heartbeatAt));
      }
      const idle = runner.id === "conf-worker-a" ? b : a;
      const idleId = idle.id;
      expect(both.get(idleId)!.running).toEqual([]);
      expect(both.get(idleId)!.runningSince).toEqual([]);

      // A clean stop removes its record at once.
      await idle.stop({ graceMs: 0 });
      expect((await listed()).has(idleId)).toBe(false);

      release();
      await eventually("the finished job no longer listed", async () => (await listed()).get(runner.id)?.running.length === 0);
    });

    it("shows a worker that stopped heartbeating (killed, no clean stop) as gone, then forgets it", async () => {
      let killed = false;
      // The process vanishing: its registry writes, the last one included, never reach the store.
      const store = backend.workerStore();
      const dying: WorkerStore = {
        kind: store.kind,
        beat: (record) => (killed ? Promise.resolve() : store.beat(record)),
        remove: (params) => (killed ? Promise.resolve() : store.remove(params)),
        list: () => store.list(),
      };
      const doomed = withMethod(peer, "workerStore", () => dying);
      const task = defineTask("conf.noop", async () => undefined);
      const victim = startTestWorker({ backend: doomed, tasks: [task], concurrency: 1, pollIntervalMs: 200, workerId: "conf-worker-killed", registry: REGISTRY });
      const survivor = startTestWorker({ backend, tasks: [task], concurrency: 1, pollIntervalMs: 200, workerId: "conf-worker-alive", registry: REGISTRY });
      workers.push(survivor);
      await eventually("both listed online", async () => {
        const now = await listed();
        return now.get("conf-worker-killed")?.state === "online" && now.get("conf-worker-alive")?.state === "online";
      });
      killed = true;
      await victim.stop({ graceMs: 0 });
      const gone = await eventually("the killed worker shown gone", async () => {
        const record = (await listed()).get("conf-worker-killed");
        return record?.state === "gone" ? record : null;
      });
      expect(gone.id).toBe("conf-worker-killed");
      expect((await listed()).get("conf-worker-alive")?.state).toBe("online");
      await eventually("the killed worker forgotten", async () => {
        const now = await listed();
        return !now.has("conf-worker-killed") && now.get("conf-worker-alive")?.state === "online";
      });
    });
  });
}
