import { isDeepStrictEqual } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { WORKER_LOST } from "../../src/core/queue-backend.js";
import { errorToAttempt, type Job } from "../../src/core/job.js";
import { eventually, makeJob, sleep, WORKER, type BackendFactory, expectOwnCapabilities } from "./harness.js";

/** The claim / complete / retry / kill / release protocol every backend implements identically. */
export function describeProtocol(factory: BackendFactory): void {
  describe(`${factory.name}: protocol`, () => {
    let backend: QueueBackend;
    let cleanup: () => Promise<void>;
    const slack = factory.leaseSlackMs ?? 0;

    beforeEach(async () => {
      ({ backend, cleanup } = await factory.create());
      expectOwnCapabilities(factory, backend);
    });
    afterEach(async () => {
      await cleanup();
    });

    it("stores a job's JSON unchanged and gives it back on claim", async () => {
      const job = makeJob({
        task: "conf.roundtrip",
        payload: { invoice_id: 7, note: "ñandú — 日本", nested: { list: [1, 2.5, null, true] } },
        tenantId: "acme",
        requestId: "req-1",
        trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "k=v" },
        timeoutMs: 1234,
        maxAttempts: 5,
      });
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      expect(claimed).toBeDefined();
      const expected = { ...job.toJSON(), attempts: 1 };
      expect(claimed!.toJSON()).toEqual(expected);
    });

    it("gives a payload back as JSON would, in a claim and in dead letters (docs/tasks.md#payloads)", async () => {
      // What JSON changes and the payload rules keep: a Date (its ISO string), -0 (0), a property that is
      // undefined or a function (left out).
      const payload = { at: new Date(Date.UTC(2026, 0, 2)), zero: -0, gone: undefined, call: () => 1, list: [-0] };
      const asJson = { at: "2026-01-02T00:00:00.000Z", zero: 0, list: [0] };
      const job = makeJob({ task: "conf.json", payload, maxAttempts: 1 });
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      expect(claimed!.payload).toStrictEqual(asJson);
      await backend.kill({ workerId: WORKER, job: claimed!, error: errorToAttempt(new Error("no"), 1) });
      const [dead] = await backend.listDead({ limit: 1 });
      expect(dead!.job.payload).toStrictEqual(asJson);
    });

    it("claims in order of availability, then of enqueueing", async () => {
      const jobs = Array.from({ length: 5 }, (_, i) => makeJob({ payload: { i } }));
      for (const job of jobs) await backend.enqueue({ jobs: [job] });
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) {
        // A broker that pushes (RabbitMQ) may not have delivered the next message the instant the last ack left.
        const [claimed] = await eventually(`claim ${i}`, () =>
          backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 }).then((j) => (j.length ? j : null)),
        );
        seen.push((claimed!.payload as { i: number }).i);
        await backend.complete({ workerId: WORKER, job: claimed! });
      }
      expect(seen).toEqual([0, 1, 2, 3, 4]);
    });

    it("does not hand out a delayed job before its time, and counts it as scheduled", async () => {
      const job = makeJob({ delayMs: 600 });
      await backend.enqueue({ jobs: [job] });
      expect(await backend.claim({ workerId: WORKER, limit: 10, leaseMs: 30_000 })).toEqual([]);
      const depths = await backend.depths();
      expect(depths.scheduled).toBe(1);
      expect(depths.ready).toBe(0);
      const claimed = await eventually("the delayed job", async () => {
        const got = await backend.claim({ workerId: WORKER, limit: 10, leaseMs: 30_000 });
        return got.length ? got : null;
      });
      expect(claimed.map((j) => j.id)).toEqual([job.id]);
      expect(Date.now()).toBeGreaterThanOrEqual(job.availableAt.getTime());
    });

    it("ignores an enqueue of an id that already exists", async () => {
      const job = makeJob({ id: "fixed-id-1" });
      expect((await backend.enqueue({ jobs: [job] })).inserted).toEqual(["fixed-id-1"]);
      expect((await backend.enqueue({ jobs: [makeJob({ id: "fixed-id-1" })] })).inserted).toEqual([]);
      expect((await backend.depths()).ready).toBe(1);
    });

    it("records a failed attempt and makes the job claimable again at its retry time", async () => {
      const job = makeJob();
      await backend.enqueue({ jobs: [job] });
      const [first] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      expect(first!.attempts).toBe(1);
      const failure = new TypeError("card declined");
      await backend.retry({
        workerId: WORKER,
        job: first!,
        error: errorToAttempt(failure, 1),
        availableAt: new Date(Date.now() + 400),
      });
      expect(await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 })).toEqual([]);
      expect((await backend.depths()).scheduled).toBe(1);
      const [second] = await eventually("the retry", () => backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 }).then((j) => (j.length ? j : null)));
      expect(second!.attempts).toBe(2);
      expect(second!.errors).toHaveLength(1);
      expect(second!.errors[0]).toMatchObject({ attempt: 1, class: "TypeError", message: "card declined" });
      expect(second!.errors[0]!.stack).toContain("card declined");
    });

    it("moves a killed job to dead letters with its whole error history, newest death first", async () => {
      const a = makeJob({ task: "conf.a" });
      const b = makeJob({ task: "conf.b" });
      await backend.enqueue({ jobs: [a, b] });
      // A quorum queue's second delivery may reach the consumer a moment after the first: claim until both are held.
      const claimed: Job[] = [];
      await eventually("both jobs claimed", async () => {
        claimed.push(...(await backend.claim({ workerId: WORKER, limit: 2 - claimed.length, leaseMs: 30_000 })));
        return claimed.length >= 2 ? true : null;
      });
      expect(claimed).toHaveLength(2);
      const ja = claimed.find((j) => j.id === a.id)!;
      const jb = claimed.find((j) => j.id === b.id)!;
      await backend.kill({ workerId: WORKER, job: ja, error: errorToAttempt(new Error("first to die"), 1) });
      await sleep(20);
      await backend.kill({ workerId: WORKER, job: jb, error: errorToAttempt(new RangeError("second to die"), 1) });
      const dead = await backend.listDead({ limit: 10 });
      expect(dead.map((d) => d.job.id)).toEqual([b.id, a.id]);
      expect(dead[0]!.lastError).toMatchObject({ class: "RangeError", message: "second to die" });
      expect(Date.parse(dead[0]!.diedAt)).toBeGreaterThanOrEqual(Date.parse(dead[1]!.diedAt));
      // RabbitMQ reads dead letters by taking them out and putting them back, and a quorum queue's count trails
      // that by a moment: every backend must settle on 2.
      let deadCount: number | undefined;
      await eventually("the dead count settles", async () => ((deadCount = (await backend.depths()).dead) === 2 ? true : null), 5_000).catch(() => undefined);
      expect(deadCount).toBe(2);
    });

    it("retries dead letters with attempts reset and reports ids it does not know", async () => {
      const job = makeJob();
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      await backend.kill({ workerId: WORKER, job: claimed!, error: errorToAttempt(new Error("boom"), 1) });
      const result = await backend.retryDead({ ids: [job.id, "no-such-job"] });
      expect(result).toEqual({ retried: [job.id], missing: ["no-such-job"] });
      expect((await backend.depths()).dead).toBe(0);
      const [again] = await eventually("the retried job", () => backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 }).then((j) => (j.length ? j : null)));
      expect(again!.id).toBe(job.id);
      expect(again!.attempts).toBe(1);
      expect(again!.errors.map((e) => e.message)).toEqual(["boom"]);
    });

    it("retries every dead letter with --all, and discards", async () => {
      const jobs = [makeJob(), makeJob(), makeJob()];
      await backend.enqueue({ jobs });
      const claimed = await backend.claim({ workerId: WORKER, limit: 3, leaseMs: 30_000 });
      for (const j of claimed) await backend.kill({ workerId: WORKER, job: j, error: errorToAttempt(new Error("x"), 1) });
      expect((await backend.discardDead({ ids: [jobs[0]!.id] })).discarded).toEqual([jobs[0]!.id]);
      expect((await backend.retryDead({ all: true })).retried.sort()).toEqual([jobs[1]!.id, jobs[2]!.id].sort());
      const depths = await backend.depths();
      expect(depths.dead).toBe(0);
      expect(depths.ready).toBe(2);
    });

    it("releases a running job at once and gives its attempt back", async () => {
      const job = makeJob();
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 60_000 });
      expect((await backend.depths()).running).toBe(1);
      await backend.release({ workerId: WORKER, jobs: [claimed!] });
      const [again] = await eventually("the released job", () => backend.claim({ workerId: WORKER, limit: 1, leaseMs: 60_000 }).then((j) => (j.length ? j : null)));
      expect(again!.id).toBe(job.id);
      expect(again!.attempts).toBe(1);
      expect(again!.errors).toEqual([]);
    });

    it("puts a released job back as it was stored, whatever its handler did to the claimed copy", async () => {
      const job = makeJob({ payload: { items: [1, 2], nested: { k: "v" } } });
      await backend.enqueue({ jobs: [job] });
      const [claimed] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 60_000 });
      const payload = claimed!.payload as { items: number[]; nested: { k: string }; added?: boolean };
      payload.items.push(3);
      payload.nested.k = "changed";
      payload.added = true;
      claimed!.errors.push({ attempt: 1, at: new Date().toISOString(), class: "Error", message: "made up by the handler" });
      await backend.release({ workerId: WORKER, jobs: [claimed!] });
      const [again] = await eventually("the released job", () => backend.claim({ workerId: WORKER, limit: 1, leaseMs: 60_000 }).then((j) => (j.length ? j : null)));
      expect(again!.payload).toEqual({ items: [1, 2], nested: { k: "v" } });
      expect(again!.errors).toEqual([]);
    });

    it("makes a job claimable again when its lease expires, counting the lost attempt", async () => {
      const job = makeJob({ maxAttempts: 3 });
      await backend.enqueue({ jobs: [job] });
      const leaseStarted = Date.now();
      await backend.claim({ workerId: "vanished-worker", limit: 1, leaseMs: 300 });
      // While the lease runs nobody else gets the job. On a loaded machine this claim can return after the lease
      // has expired: the job may then be handed out, but never before 300 ms have passed since the lease began.
      let [again] = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 });
      if (again !== undefined) expect(Date.now() - leaseStarted).toBeGreaterThanOrEqual(300);
      else {
        await sleep(400 + slack);
        [again] = await eventually("the reclaimed job", () => backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 }).then((j) => (j.length ? j : null)));
      }
      expect(again!.id).toBe(job.id);
      expect(again!.attempts).toBe(2);
      expect(again!.errors.at(-1)).toMatchObject({ attempt: 1, reason: WORKER_LOST });
      // The vanished worker's late outcome must not overwrite the new owner's.
      await backend.complete({ workerId: "vanished-worker", job: again! });
      expect((await backend.depths()).running).toBe(1);
      expect((await backend.listDead({ limit: 5 })).length).toBe(0);
    });

    it("dead-letters a poison pill with 'worker lost' once its attempts are spent", async () => {
      const job = makeJob({ maxAttempts: 2 });
      await backend.enqueue({ jobs: [job] });
      for (let attempt = 1; attempt <= 2; attempt++) {
        const got = await eventually(`attempt ${attempt}`, () => backend.claim({ workerId: `doomed-${attempt}`, limit: 1, leaseMs: 200 }).then((j) => (j.length ? j : null)));
        expect(got[0]!.attempts).toBe(attempt);
        await sleep(300 + slack);
      }
      const dead = await eventually("the poison pill in dead letters", async () => {
        await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 }).then((j) => expect(j).toEqual([]));
        const list = await backend.listDead({ limit: 10 });
        return list.length ? list : null;
      });
      expect(dead[0]!.job.id).toBe(job.id);
      expect(dead[0]!.lastError?.reason).toBe(WORKER_LOST);
      expect(dead[0]!.job.attempts).toBe(2);
    });

    it("keeps a job whose lease is extended by heartbeats", async () => {
      const job = makeJob();
      await backend.enqueue({ jobs: [job] });
      // Held past its first lease (3 × 500 ms > 1 000 ms) only by the extensions; each extension leaves 500 ms of margin
      // for a loaded machine's late timers.
      await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 1000 });
      for (let i = 0; i < 3; i++) {
        await sleep(500);
        await backend.extendLeases({ workerId: WORKER, jobIds: [job.id], leaseMs: 1000 + slack });
        expect(await backend.claim({ workerId: "other", limit: 1, leaseMs: 30_000 })).toEqual([]);
      }
    });

    it("never hands the same job to two concurrent claimers", async () => {
      const jobs = Array.from({ length: 200 }, (_, i) => makeJob({ payload: { i } }));
      await backend.enqueue({ jobs });
      const seen = new Map<string, string>();
      const duplicates: string[] = [];
      await Promise.all(
        Array.from({ length: 10 }, async (_, w) => {
          for (;;) {
            const claimed = await backend.claim({ workerId: `w${w}`, limit: 7, leaseMs: 60_000 });
            if (claimed.length === 0) {
              const depths = await backend.depths();
              if (depths.ready === 0) return;
              continue;
            }
            for (const job of claimed) {
              if (seen.has(job.id)) duplicates.push(job.id);
              seen.set(job.id, `w${w}`);
              await backend.complete({ workerId: `w${w}`, job });
            }
          }
        }),
      );
      expect(duplicates).toEqual([]);
      expect(seen.size).toBe(200);
    });

    it("reports depths by state", async () => {
      const got: Awaited<ReturnType<QueueBackend["claim"]>> = [];
      await backend.enqueue({ jobs: [makeJob(), makeJob(), makeJob(), makeJob({ delayMs: 60_000 })] });
      // A broker delivers what it pushes a moment after the enqueue is confirmed: claim until both are held.
      const held = await eventually("two claimed", async () => {
        got.push(...(await backend.claim({ workerId: WORKER, limit: 2 - got.length, leaseMs: 60_000 })));
        return got.length === 2 ? got : null;
      });
      const [running, toKill] = held;
      expect(running && toKill).toBeTruthy();
      await backend.kill({ workerId: WORKER, job: toKill!, error: errorToAttempt(new Error("dead"), 1) });
      // A quorum queue's message count is read from its replicated state, which can trail a delivery by a
      // moment; every backend must settle on these counts.
      const want = { ready: 1, scheduled: 1, running: 1, dead: 1 };
      let last: unknown;
      await eventually("depths settle", async () => {
        last = await backend.depths();
        return isDeepStrictEqual(last, want) ? true : null;
      }, 5_000).catch(() => undefined);
      expect(last).toEqual(want);
    });

    it("reports depths per task, and per tenant", async () => {
      const running = makeJob({ task: "conf.c", tenantId: "acme" });
      const doomed = makeJob({ task: "conf.d" });
      await backend.enqueue({ jobs: [running, doomed] });
      // A broker delivers what it pushes a moment after the enqueue is confirmed, maybe one at a time: claim until
      // both are held (a job claimed by an earlier call stays held; it never comes back to a later one).
      const got: Awaited<ReturnType<QueueBackend["claim"]>> = [];
      const claimed = await eventually("both claimed", async () => {
        got.push(...(await backend.claim({ workerId: WORKER, limit: 2 - got.length, leaseMs: 60_000 })));
        return got.length === 2 ? got : null;
      });
      await backend.kill({ workerId: WORKER, job: claimed.find((j) => j.id === doomed.id)!, error: errorToAttempt(new Error("dead"), 1) });
      await backend.enqueue({
        jobs: [makeJob({ task: "conf.a", tenantId: "acme" }), makeJob({ task: "conf.a" }), makeJob({ task: "conf.b", tenantId: "acme", delayMs: 60_000 })],
      });
      if (factory.capabilities.perTaskDepths === false) {
        await expect(backend.depthsByTask()).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        return;
      }
      const all = await backend.depthsByTask();
      expect(all).toEqual({
        exact: true,
        tasks: {
          "conf.a": { ready: 2, scheduled: 0, running: 0, dead: 0 },
          "conf.b": { ready: 0, scheduled: 1, running: 0, dead: 0 },
          "conf.c": { ready: 0, scheduled: 0, running: 1, dead: 0 },
          "conf.d": { ready: 0, scheduled: 0, running: 0, dead: 1 },
        },
      });
      const acme = await backend.depthsByTask({ tenantId: "acme" });
      expect(acme.tasks).toEqual({
        "conf.a": { ready: 1, scheduled: 0, running: 0, dead: 0 },
        "conf.b": { ready: 0, scheduled: 1, running: 0, dead: 0 },
        "conf.c": { ready: 0, scheduled: 0, running: 1, dead: 0 },
      });
      // The dead letter leaves its task's count when it is retried.
      await backend.retryDead({ ids: [doomed.id] });
      expect((await backend.depthsByTask()).tasks["conf.d"]).toEqual({ ready: 1, scheduled: 0, running: 0, dead: 0 });
    });

    it("finds a request's jobs in any state, oldest first, through an index (requestIndex), or answers NOT_SUPPORTED", async () => {
      const requestId = `req-${Date.now()}`;
      const first = makeJob({ task: "conf.a", requestId });
      const other = makeJob({ task: "conf.a", requestId: `${requestId}-other` });
      const second = makeJob({ task: "conf.b", requestId, delayMs: 60_000 });
      if (!factory.capabilities.requestIndex) {
        await backend.enqueue({ jobs: [first] });
        await expect(backend.jobsByRequest({ requestId, limit: 10 })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        return;
      }
      await backend.enqueue({ jobs: [first] });
      const [claimed] = await eventually("claimed", async () => {
        const got = await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 60_000 });
        return got.length > 0 ? got : null;
      });
      await backend.complete({ workerId: WORKER, job: claimed! });
      await backend.enqueue({ jobs: [other, second] });
      const found = await backend.jobsByRequest({ requestId, limit: 10 });
      expect(found.map((j) => j.info.job.id)).toEqual([first.id, second.id]);
      expect(found[0]).toMatchObject({ info: { state: "completed" } });
      expect(found[0]!.finishedAt).not.toBeNull();
      expect(found.find((j) => j.info.job.id === second.id)).toMatchObject({ info: { state: "ready" }, finishedAt: null });
      expect(await backend.jobsByRequest({ requestId, limit: 1 })).toHaveLength(1);
    });

    it("finds dead letters by a payload field through an index, or answers NOT_SUPPORTED", async () => {
      const jobs = [
        makeJob({ task: "conf.a", payload: { customer: { id: 42, name: "x" } } }),
        makeJob({ task: "conf.b", payload: { customer: { id: "42" } } }),
        makeJob({ task: "conf.a", payload: { customer: { id: 7 } } }),
      ];
      await backend.enqueue({ jobs });
      // Claimed until all three are held, however the broker spreads its deliveries over the calls.
      const got: Awaited<ReturnType<QueueBackend["claim"]>> = [];
      const claimed = await eventually("all claimed", async () => {
        got.push(...(await backend.claim({ workerId: WORKER, limit: 3 - got.length, leaseMs: 60_000 })));
        return got.length === 3 ? got : null;
      });
      for (const job of claimed) await backend.kill({ workerId: WORKER, job, error: errorToAttempt(new Error("dead"), 1) });
      const search = { payload: { path: ["customer", "id"], equals: 42 }, limit: 10 };
      if (!factory.capabilities.payloadIndex) {
        await expect(backend.searchDead(search)).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
        return;
      }
      const found = await backend.searchDead(search);
      expect(found.rows.map((d) => d.job.id)).toEqual([jobs[0]!.id]);
      expect(found.rows[0]!.job.payload).toEqual({ customer: { id: 42, name: "x" } });
      expect(found.next).toBeNull();
      expect((await backend.searchDead({ ...search, payload: { path: ["customer", "id"], equals: "42" } })).rows.map((d) => d.job.id)).toEqual([jobs[1]!.id]);
      expect((await backend.searchDead({ ...search, task: "conf.b" })).rows).toEqual([]);
    });

    it("wakes a waiting worker when a job is enqueued", async () => {
      const controller = new AbortController();
      const started = Date.now();
      const waiting = backend.waitForWork({ signal: controller.signal, timeoutMs: 60_000 });
      await sleep(50);
      await backend.enqueue({ jobs: [makeJob()] });
      await waiting;
      controller.abort();
      // Woken by the enqueue, long before the 60 s safety-net poll.
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(await backend.claim({ workerId: WORKER, limit: 1, leaseMs: 30_000 })).toHaveLength(1);
    });
  });
}
