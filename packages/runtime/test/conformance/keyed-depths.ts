import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { TaskLimits } from "../../src/core/limits.js";
import { ListOrder, ListState, type JobInfo, type QueueBackend } from "../../src/core/queue-backend.js";
import { tenantDepths } from "../../src/admin/tenant-depths.js";
import { JfastError } from "../../src/errors/jfast-error.js";
import { expectOwnCapabilities, makeJob, type BackendFactory } from "./harness.js";

const FAIR = "conf.kd_fair";
const LIMITED = "conf.kd_limited";
const ORDERED = "conf.kd_ordered";

const LIMITS = new Map<string, TaskLimits>([
  [FAIR, { concurrency: null, rateLimit: null, fair: { weights: {} } }],
  [LIMITED, { concurrency: 1, rateLimit: null, perKey: true }],
  [ORDERED, { concurrency: null, rateLimit: null, ordered: { onDead: "block" } }],
]);

function keyed(task: string, key: string, i: number, init: { availableAt?: Date; tenantId?: string } = {}): Job {
  const job = makeJob({ task, payload: { key, i }, tenantId: init.tenantId ?? key, ...(init.availableAt ? { availableAt: init.availableAt } : {}) });
  // What QueueProvider.prepare fills in from the task's key option.
  job.limitKey = key;
  return job;
}

/**
 * Queue depths count the waiting jobs of keyed tasks (docs/flow-control.md#queue-depths-and-keyed-jobs) as they
 * count any waiting job, wherever the backend holds them (Redis: on each key's own list): a fair task's due jobs,
 * jobs over their key's limit, an ordered key's next jobs are `ready`; the depths are the same read by a process
 * that declared no limits.
 */
export function describeKeyedDepths(factory: BackendFactory): void {
  describe(`${factory.name}: depths with keyed jobs`, () => {
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

    if (!factory.capabilities.keyedLimits) {
      it("refuses keyed tasks with NOT_SUPPORTED, so no job waits on a key uncounted", async () => {
        const error = await backend.setLimits({ limits: LIMITS }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(JfastError);
        expect((error as JfastError).code).toBe("NOT_SUPPORTED");
      });
      it("says the by-tenant view is not supported rather than showing partial counts", async () => {
        const view = await tenantDepths({ backend });
        expect(view).toMatchObject({ supported: false, tenants: [] });
        expect(view.reason).toContain("cannot list ready jobs");
      });
      return;
    }

    it("counts fair, over-limit and ordered jobs waiting on their keys as ready, before and after a claim and a cancel", async () => {
      await backend.setLimits({ limits: LIMITS });
      const later = new Date(Date.now() + 3_600_000);
      const limited = [0, 1, 2, 3].map((i) => keyed(LIMITED, "k", i));
      await backend.enqueue({
        jobs: [
          ...[0, 1, 2].map((i) => keyed(FAIR, "a", i)),
          ...[0, 1].map((i) => keyed(FAIR, "b", i)),
          ...limited,
          ...[0, 1, 2].map((i) => keyed(ORDERED, "o", i)),
          keyed(FAIR, "c", 0, { availableAt: later }),
        ],
      });
      expect(await backend.depths()).toEqual({ ready: 12, scheduled: 1, running: 0, dead: 0 });
      const claimed = await backend.claim({ workerId: "kd", limit: 100, leaseMs: 60_000 });
      // Every fair job, one of the limited key's (limit 1) and the ordered key's head.
      expect(claimed).toHaveLength(7);
      expect(await backend.depths()).toEqual({ ready: 5, scheduled: 1, running: 7, dead: 0 });
      const byTask = await backend.depthsByTask();
      expect(byTask.tasks[LIMITED]).toMatchObject({ ready: 3, running: 1 });
      expect(byTask.tasks[ORDERED]).toMatchObject({ ready: 2, running: 1 });
      expect(byTask.tasks[FAIR]).toMatchObject({ ready: 0, scheduled: 1, running: 5 });
      expect((await backend.depthsByTask({ tenantId: "k" })).tasks[LIMITED]).toMatchObject({ ready: 3, running: 1 });
      expect((await backend.depthsByTask({ tenantId: "a" })).tasks[LIMITED]?.ready ?? 0).toBe(0);
      if (peer) {
        // A process that declared no limits (the CLI, the dashboard's service) reads the same depths.
        const other = await peer();
        expect(await other.depths()).toEqual({ ready: 5, scheduled: 1, running: 7, dead: 0 });
      }
      // A waiting keyed job cancelled leaves the count; the rest still start in turn.
      const waiting = limited.filter((j) => !claimed.some((c) => c.id === j.id));
      expect(waiting).toHaveLength(3);
      expect((await backend.cancel({ id: waiting[2]!.id })).cancelled).toBe(true);
      expect(await backend.depths()).toEqual({ ready: 4, scheduled: 1, running: 7, dead: 0 });
      for (const job of claimed) await backend.complete({ workerId: "kd", job });
      const next = await backend.claim({ workerId: "kd", limit: 100, leaseMs: 60_000 });
      expect(next.map((j) => j.task).sort()).toEqual([LIMITED, ORDERED]);
      expect(await backend.depths()).toEqual({ ready: 2, scheduled: 1, running: 2, dead: 0 });
    });

    /** Every page of the ready state, `limit` rows at a time, following the cursor. */
    async function listAllReady(on: QueueBackend, order: ListOrder, limit: number): Promise<JobInfo[]> {
      const rows: JobInfo[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const listing = await on.listJobs({ state: ListState.ready, order, limit, ...(cursor ? { after: cursor } : {}) });
        rows.push(...listing.rows);
        if (listing.next === null) return rows;
        cursor = listing.next;
      }
      throw new Error("the ready listing did not end within 100 pages");
    }

    it("lists fair, over-limit and ordered jobs waiting on their keys as ready, page by page, and counts them per tenant", async () => {
      await backend.setLimits({ limits: LIMITS });
      const later = new Date(Date.now() + 3_600_000);
      const plain = [0, 1].map((i) => makeJob({ task: "conf.kd_plain", payload: { i }, tenantId: "p" }));
      const jobs = [
        ...[0, 1, 2].map((i) => keyed(FAIR, "a", i)),
        ...[0, 1].map((i) => keyed(FAIR, "b", i)),
        ...[0, 1, 2, 3].map((i) => keyed(LIMITED, "k", i)),
        ...[0, 1, 2].map((i) => keyed(ORDERED, "o", i)),
        ...plain,
      ];
      await backend.enqueue({ jobs: [...jobs, keyed(FAIR, "c", 0, { availableAt: later })] });
      const ids = (rows: JobInfo[]) => rows.map((r) => r.job.id).sort();
      const all = jobs.map((j) => j.id).sort();
      // Every waiting job is on the ready pages exactly once, in either order and at any page size.
      for (const order of [ListOrder.oldest, ListOrder.newest]) {
        for (const limit of [50, 4, 1]) expect(ids(await listAllReady(backend, order, limit))).toEqual(all);
      }
      // Filtered by task and by tenant as any job.
      expect(ids((await backend.listJobs({ state: ListState.ready, order: ListOrder.oldest, limit: 50, task: ORDERED })).rows)).toEqual(
        jobs.filter((j) => j.task === ORDERED).map((j) => j.id).sort(),
      );
      expect((await backend.listJobs({ state: ListState.ready, order: ListOrder.oldest, limit: 50, tenantId: "b" })).rows).toHaveLength(2);
      const tenants = async (on: QueueBackend) => {
        const view = await tenantDepths({ backend: on });
        expect(view).toMatchObject({ supported: true, exact: true });
        return Object.fromEntries(view.tenants.map((t) => [t.tenantId, { ready: t.ready, scheduled: t.scheduled, running: t.running }]));
      };
      expect(await tenants(backend)).toEqual({
        a: { ready: 3, scheduled: 0, running: 0 },
        b: { ready: 2, scheduled: 0, running: 0 },
        c: { ready: 0, scheduled: 1, running: 0 },
        k: { ready: 4, scheduled: 0, running: 0 },
        o: { ready: 3, scheduled: 0, running: 0 },
        p: { ready: 2, scheduled: 0, running: 0 },
      });
      // Once claimed (every fair job, the limited key's one slot, the ordered key's head, the plain jobs), the rest
      // still wait on their keys and are listed; the running ones are counted as running.
      const claimed = await backend.claim({ workerId: "kl", limit: 100, leaseMs: 60_000 });
      expect(claimed).toHaveLength(9);
      const left = jobs.filter((j) => !claimed.some((c) => c.id === j.id));
      expect(left.map((j) => j.task).sort()).toEqual([LIMITED, LIMITED, LIMITED, ORDERED, ORDERED]);
      for (const order of [ListOrder.oldest, ListOrder.newest]) expect(ids(await listAllReady(backend, order, 2))).toEqual(left.map((j) => j.id).sort());
      const counted = {
        a: { ready: 0, scheduled: 0, running: 3 },
        b: { ready: 0, scheduled: 0, running: 2 },
        c: { ready: 0, scheduled: 1, running: 0 },
        k: { ready: 3, scheduled: 0, running: 1 },
        o: { ready: 2, scheduled: 0, running: 1 },
        p: { ready: 0, scheduled: 0, running: 2 },
      };
      expect(await tenants(backend)).toEqual(counted);
      // A process that declared no limits (the dashboard's service, the CLI) lists and counts the same.
      if (peer) expect(await tenants(await peer())).toEqual(counted);
    });
  });
}
