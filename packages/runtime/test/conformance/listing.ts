import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorToAttempt, type Job } from "../../src/core/job.js";
import { JobState } from "../../src/core/job-state.js";
import { ListState, type JobListing, type ListJobsParams, type ListOrder, type QueueBackend } from "../../src/core/queue-backend.js";
import { eventually, makeJob, WORKER, type BackendFactory, expectOwnCapabilities } from "./harness.js";

const ALL_STATES = Object.values(ListState);

/**
 * Listing jobs by state (docs/admin-api.md#listing-jobs): every state the backend can list, in both orders, with
 * filters and keyset pages; running a scheduled job now; deleting a waiting one. A state a backend cannot list
 * answers NOT_SUPPORTED, as do actions it cannot take.
 */
export function describeListing(factory: BackendFactory): void {
  const listable = new Set(factory.capabilities.listableStates);

  describe(`${factory.name}: listing jobs by state`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ backend, cleanup } = await factory.create());
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await cleanup();
    });

    /** Every page of a listing, following `next`; the ids in order. */
    async function allPages(params: Omit<ListJobsParams, "after">): Promise<{ ids: string[]; pages: JobListing[] }> {
      const pages: JobListing[] = [];
      let after: string | undefined;
      for (let i = 0; i < 50; i++) {
        const page = await backend.listJobs({ ...params, after });
        pages.push(page);
        if (page.next === null) break;
        after = page.next;
      }
      return { ids: pages.flatMap((p) => p.rows.map((r) => r.job.id)), pages };
    }

    /** Five ready jobs due in enqueue order (a, b, a, b, a; every other one tenant acme), two scheduled. */
    async function seed() {
      const base = Date.now() - 60_000;
      const ready = Array.from({ length: 5 }, (_, i) =>
        makeJob({ task: i % 2 === 0 ? "conf.list_a" : "conf.list_b", tenantId: i % 2 === 0 ? "acme" : null, availableAt: new Date(base + i * 1000) }),
      );
      for (const job of ready) await backend.enqueue({ jobs: [job] });
      const scheduled = [makeJob({ task: "conf.list_a", delayMs: 60_000 }), makeJob({ task: "conf.list_b", delayMs: 120_000 })];
      await backend.enqueue({ jobs: scheduled });
      return { ready, scheduled };
    }

    if (listable.has(ListState.ready)) {
      it("lists ready jobs oldest and newest first, a keyset page at a time, filtered by task, tenant and id", async () => {
        const { ready, scheduled } = await seed();
        const ids = ready.map((j) => j.id);
        const oldest = await allPages({ state: ListState.ready, order: "oldest", limit: 2 });
        expect(oldest.ids).toEqual(ids);
        expect(oldest.pages.length).toBeGreaterThanOrEqual(3);
        expect(oldest.pages[0]!.rows.every((r) => r.state === JobState.ready)).toBe(true);
        expect((await allPages({ state: ListState.ready, order: "newest", limit: 2 })).ids).toEqual([...ids].reverse());
        expect((await allPages({ state: ListState.ready, order: "oldest", limit: 10, task: "conf.list_b" })).ids).toEqual([ids[1], ids[3]]);
        expect((await allPages({ state: ListState.ready, order: "oldest", limit: 10, tenantId: "acme" })).ids).toEqual([ids[0], ids[2], ids[4]]);
        expect((await backend.listJobs({ state: ListState.ready, order: "oldest", limit: 10, id: ids[3] })).rows.map((r) => r.job.id)).toEqual([ids[3]]);
        // An exact id in another state is not on this state's page.
        expect((await backend.listJobs({ state: ListState.ready, order: "oldest", limit: 10, id: scheduled[0]!.id })).rows).toEqual([]);
      });

      it("refuses a cursor of another listing with CURSOR_INVALID", async () => {
        await seed();
        const page = await backend.listJobs({ state: ListState.ready, order: "oldest", limit: 1 });
        expect(page.next).not.toBeNull();
        await expect(backend.listJobs({ state: ListState.ready, order: "newest", limit: 1, after: page.next! })).rejects.toMatchObject({ code: "CURSOR_INVALID" });
        await expect(backend.listJobs({ state: ListState.ready, order: "oldest", limit: 1, after: "garbage" })).rejects.toMatchObject({ code: "CURSOR_INVALID" });
      });
    }

    if (listable.has(ListState.scheduled)) {
      it("lists scheduled jobs by the time they come due, and runs one now", async () => {
        const { scheduled } = await seed();
        expect((await allPages({ state: ListState.scheduled, order: "oldest", limit: 1 })).ids).toEqual(scheduled.map((j) => j.id));
        expect((await allPages({ state: ListState.scheduled, order: "newest", limit: 10 })).ids).toEqual(scheduled.map((j) => j.id).reverse());
        expect(await backend.runNow({ id: scheduled[1]!.id })).toEqual({ done: true, state: JobState.ready });
        expect((await allPages({ state: ListState.scheduled, order: "oldest", limit: 10 })).ids).toEqual([scheduled[0]!.id]);
        expect((await allPages({ state: ListState.ready, order: "oldest", limit: 10 })).ids).toContain(scheduled[1]!.id);
      });
    }

    if (listable.has(ListState.running) || listable.has(ListState.completed) || listable.has(ListState.dead)) {
      it("lists running, completed, dead and cancelled jobs where the backend keeps them", async () => {
        const { ready } = await seed();
        // A broker delivers asynchronously: claim until the first three arrived.
        const claimed: Job[] = [];
        await eventually("three claims", async () => {
          claimed.push(...(await backend.claim({ workerId: WORKER, limit: 3 - claimed.length, leaseMs: 30_000 })));
          return claimed.length === 3;
        });
        expect(claimed.map((j) => j.id)).toEqual(ready.slice(0, 3).map((j) => j.id));
        await backend.complete({ workerId: WORKER, job: claimed[0]! });
        await backend.kill({ workerId: WORKER, job: claimed[1]!, error: errorToAttempt(new Error("boom"), 1) });
        const expectations: Array<[ListState, string[]]> = [
          [ListState.running, [claimed[2]!.id]],
          [ListState.completed, [claimed[0]!.id]],
          [ListState.dead, [claimed[1]!.id]],
        ];
        if (factory.capabilities.cancellation !== false && factory.capabilities.cancellation !== "recorded") {
          await backend.cancel({ id: ready[3]!.id });
          expectations.push([ListState.cancelled, [ready[3]!.id]]);
        }
        for (const [state, ids] of expectations) {
          if (!listable.has(state)) continue;
          for (const order of ["oldest", "newest"] as ListOrder[]) {
            const { ids: listed, pages } = await allPages({ state, order, limit: 10 });
            expect(listed, `${state} ${order}`).toEqual(ids);
            expect(pages[0]!.rows[0]!.state, state).toBe(state);
          }
        }
        const dead = await backend.listJobs({ state: ListState.dead, order: "newest", limit: 10, task: ready[1]!.task });
        expect(dead.rows[0]?.diedAt).not.toBeNull();
        expect((await backend.listJobs({ state: ListState.dead, order: "newest", limit: 10, task: "conf.none" })).rows).toEqual([]);
        // Neither action touches a running job.
        if (listable.has(ListState.ready)) {
          expect(await backend.runNow({ id: claimed[2]!.id })).toEqual({ done: false, state: JobState.running });
          expect(await backend.deleteJob({ id: claimed[2]!.id })).toEqual({ done: false, state: JobState.running });
        }
        await backend.release({ workerId: WORKER, jobs: [claimed[2]!] });
      });
    }

    if (listable.has(ListState.ready)) {
      it("deletes a waiting job for good, and nothing else", async () => {
        const { ready, scheduled } = await seed();
        expect(await backend.deleteJob({ id: ready[2]!.id })).toEqual({ done: true, state: null });
        expect(await backend.deleteJob({ id: scheduled[0]!.id })).toEqual({ done: true, state: null });
        expect(await backend.deleteJob({ id: ready[2]!.id })).toEqual({ done: false, state: null });
        expect(await backend.getJob({ id: ready[2]!.id })).toBeNull();
        expect((await allPages({ state: ListState.ready, order: "oldest", limit: 10 })).ids).not.toContain(ready[2]!.id);
        expect((await allPages({ state: ListState.scheduled, order: "oldest", limit: 10 })).ids).toEqual([scheduled[1]!.id]);
        expect(await backend.runNow({ id: "no-such-job" })).toEqual({ done: false, state: null });
        const claimed = await backend.claim({ workerId: WORKER, limit: 10, leaseMs: 30_000 });
        expect(claimed.map((j) => j.id)).toEqual([ready[0]!.id, ready[1]!.id, ready[3]!.id, ready[4]!.id]);
      });
    }

    const unlisted = ALL_STATES.filter((s) => !listable.has(s));
    if (unlisted.length > 0) {
      it(`answers NOT_SUPPORTED, saying why, for ${unlisted.join(", ")}`, async () => {
        await seed();
        for (const state of unlisted) {
          const error = await backend.listJobs({ state, order: "oldest", limit: 10 }).then(
            () => null,
            (e: unknown) => e as { code?: string; message?: string },
          );
          expect(error?.code, state).toBe("NOT_SUPPORTED");
          expect(error?.message, state).toMatch(/cannot list/);
        }
        if (!listable.has(ListState.ready)) {
          await expect(backend.runNow({ id: "any" })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
          await expect(backend.deleteJob({ id: "any" })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        }
      });
    }
  });
}
