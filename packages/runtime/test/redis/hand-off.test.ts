import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend, SlotOffer } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createLogger } from "../../src/observability/logger.js";
import { PausedTasks } from "../../src/queue/paused-tasks.js";
import type { Worker } from "../../src/worker/worker.js";
import { countingHandOffs, eventually, makeJob, sleep, expectOwnCopyHandedOver, startTestWorker } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

const silentLogger = createLogger({ service: "test", level: "silent" });

/**
 * The in-process hand-off (docs/redis.md#in-process-hand-off): a job enqueued next to an idle worker of the same
 * process is stored already claimed by it and handed over in memory, with no push onto the ready list, no
 * wake-up and no claim. Read from the outside: the handler starts before `enqueue` returns (a wake-up and a
 * claim take at least one more round trip after the enqueue's reply), and the job's hash is `running`, owned by
 * the worker, in its processing list and in the running set before the handler ends.
 */
describe("redis: in-process hand-off to an idle worker", () => {
  const raw = rawClient();
  const workers: Worker[] = [];
  const pausedSets: PausedTasks[] = [];
  let backend: RedisBackend | null = null;
  let queue = "";
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    for (const set of pausedSets.splice(0)) set.stop();
    await backend?.close();
    backend = null;
    await dropQueue(queue);
  });
  afterAll(() => raw.disconnect());

  /** A backend, and a gate the `gate.wait` handler blocks on. */
  async function setup(label: string) {
    queue = uniqueQueue(label);
    backend = await openBackend(queue);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const seen: Job[] = [];
    const wait = defineTask("gate.wait", async (_payload, { job }) => {
      seen.push(job);
      await gate;
    });
    const quick = defineTask("gate.quick", async (_payload, { job }) => {
      seen.push(job);
    });
    return { backend, open, seen, tasks: [wait, quick] };
  }

  function startWorker(tasks: TaskDefinition[], options: { concurrency: number; paused?: PausedTasks; backend?: QueueBackend }): Worker {
    // A long poll interval: anything found sooner was handed over or woken, not polled.
    const worker = startTestWorker({ backend: options.backend ?? backend!, tasks, concurrency: options.concurrency, pollIntervalMs: 60_000, paused: options.paused });
    workers.push(worker);
    return worker;
  }

  /** The worker sleeps in waitForWork with its slots offered. */
  async function idle(): Promise<void> {
    await eventually("the worker waits for work", async () => (backend as unknown as { q: { offers: { size: number } } }).q.offers.size > 0);
  }

  async function stored(id: string) {
    const hash = await raw.hgetall(backend!.keys.job(id));
    // A job not yet claimed keeps its attempts in its JSON only (lib.lua store_job), as decode.ts reads it.
    const attempts = hash.attempts ?? String((JSON.parse(hash.json!) as { attempts: number }).attempts);
    return { state: hash.state, owner: hash.owner ?? null, attempts: Number(attempts) };
  }

  /** A stand-in for an idle worker: records what it is handed, or that its slots were given back. */
  function fakeOffer(workerId: string, slots: number) {
    const delivered: Job[] = [];
    let cancelled = 0;
    let free = slots;
    const offer: SlotOffer = {
      workerId,
      leaseMs: 30_000,
      pausedTasks: () => [],
      reserve: (wanted) => {
        const granted = Math.min(wanted, free);
        free -= granted;
        return granted;
      },
      deliver: (jobs, reserved) => {
        delivered.push(...jobs);
        free += reserved - jobs.length;
      },
      cancel: (reserved) => {
        cancelled += reserved;
        free += reserved;
      },
    };
    return { offer, delivered, cancelled: () => cancelled };
  }

  it("a job enqueued next to an idle worker is stored claimed by it and starts before enqueue returns", async () => {
    const { open, seen, tasks } = await setup("handoff-one");
    const worker = startWorker(tasks, { concurrency: 2 });
    await idle();
    const job = makeJob({ task: "gate.wait", payload: { n: 1 } });
    const result = await backend!.enqueue({ jobs: [job] });
    expect(result.inserted).toEqual([job.id]);
    // The handler started before enqueue returned: no push, no wake-up, no claim in between.
    expect(seen.map((j) => j.id)).toEqual([job.id]);
    expect(seen[0]!.attempts).toBe(1);
    expect(await stored(job.id)).toEqual({ state: "running", owner: worker.id, attempts: 1 });
    expect(await raw.lrange(backend!.keys.processing(worker.id), 0, -1)).toEqual([job.id]);
    expect(Number(await raw.zscore(backend!.keys.running, job.id))).toBeGreaterThan(Date.now() + 20_000);
    expect(await raw.llen(backend!.keys.ready)).toBe(0);
    open();
    await eventually("the job completed", async () => (await stored(job.id)).state === "completed");
    expect(await raw.lrange(backend!.keys.processing(worker.id), 0, -1)).toEqual([]);
    // Completed once, and the worker's next claim does not hand it out again.
    await sleep(200);
    expect(seen).toHaveLength(1);
  });

  it("hands over the handler its own copy of the job; the caller's object is left as it was", async () => {
    const { seen, tasks } = await setup("handoff-copy");
    startWorker(tasks, { concurrency: 1 });
    await idle();
    await expectOwnCopyHandedOver((job) => backend!.enqueue({ jobs: [job] }), seen);
  });

  it("hands over no more jobs than free slots; the rest are stored ready and claimed the usual way", async () => {
    const { open, seen, tasks } = await setup("handoff-slots");
    const worker = startWorker(tasks, { concurrency: 2 });
    await idle();
    const jobs = Array.from({ length: 5 }, (_, i) => makeJob({ task: "gate.wait", payload: { i } }));
    await backend!.enqueue({ jobs });
    // The first two (enqueue order) were handed over before enqueue returned; the other three were stored ready.
    expect(seen.map((j) => j.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
    for (const job of jobs.slice(0, 2)) expect(await stored(job.id)).toMatchObject({ state: "running", owner: worker.id });
    open();
    await eventually("all five completed", async () => (await Promise.all(jobs.map((j) => stored(j.id)))).every((s) => s.state === "completed"), 20_000);
    expect(seen.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(seen.every((j) => j.attempts === 1)).toBe(true);
  });

  it("leaves a bulk batch (over 2 000 jobs) to the ready list, where the worker claims it", async () => {
    const { seen, tasks } = await setup("handoff-bulk");
    const counted = countingHandOffs(backend!);
    startWorker(tasks, { concurrency: 4, backend: counted.backend });
    await idle();
    const jobs = Array.from({ length: 2500 }, () => makeJob({ task: "gate.quick" }));
    await backend!.enqueue({ jobs });
    // Nothing was handed over: every id went onto the ready list, and the push woke the worker.
    expect(counted.handedOver()).toBe(0);
    await eventually("all 2 500 ran", async () => seen.length === 2500, 30_000);
  });

  it("never hands over a delayed job, or a paused task's job, whether the worker knows of the pause yet or not", async () => {
    const { seen, tasks } = await setup("handoff-never");
    const store = backend!.pauseStore();
    await store.pause({ task: "gate.wait", by: null });
    // A long refresh: the worker's view is read once, at start; a pause made later is only in Redis.
    const paused = new PausedTasks({ store, logger: silentLogger, refreshMs: 60_000 });
    await paused.start();
    pausedSets.push(paused);
    const late = defineTask("late.paused", async (_payload, { job }) => {
      seen.push(job);
    });
    startWorker([...tasks, late], { concurrency: 4, paused });
    await idle();
    await store.pause({ task: "late.paused", by: null });
    expect(paused.has("late.paused")).toBe(false);
    const delayed = makeJob({ task: "gate.quick", delayMs: 60_000 });
    const pausedJob = makeJob({ task: "gate.wait" });
    const pausedInRedisOnly = makeJob({ task: "late.paused" });
    for (const job of [delayed, pausedJob, pausedInRedisOnly]) {
      await backend!.enqueue({ jobs: [job] });
      expect(seen).toEqual([]);
      await idle();
    }
    expect((await stored(delayed.id)).state).toBe("ready");
    expect(await raw.zscore(backend!.keys.scheduled, delayed.id)).not.toBeNull();
    // Stored ready, then set aside by the worker's claim onto the paused task's list, attempts untouched.
    await eventually("both paused jobs parked", async () => {
      const parked = [...(await raw.lrange(backend!.keys.parked("gate.wait"), 0, -1)), ...(await raw.lrange(backend!.keys.parked("late.paused"), 0, -1))];
      return parked.length === 2 && parked;
    });
    for (const job of [pausedJob, pausedInRedisOnly]) expect(await stored(job.id)).toMatchObject({ state: "ready", owner: null, attempts: 0 });
    expect(seen).toEqual([]);
  });

  it("does not overtake jobs already on the ready list: the slot is given back and the batch stored ready", async () => {
    await setup("handoff-fifo");
    const workerId = "fifo-worker";
    // The backend hands over only to a worker id that has claimed here (its earlier processing list returned).
    expect(await backend!.claim({ workerId, limit: 1, leaseMs: 30_000 })).toEqual([]);
    const first = makeJob({ task: "gate.quick", payload: { n: 1 } });
    await backend!.enqueue({ jobs: [first] });
    const { offer, delivered, cancelled } = fakeOffer(workerId, 1);
    const withdraw = backend!.offerSlots(offer);
    const second = makeJob({ task: "gate.quick", payload: { n: 2 } });
    await backend!.enqueue({ jobs: [second] });
    withdraw();
    expect(delivered).toEqual([]);
    expect(cancelled()).toBe(1);
    // Claimed in enqueue order: the ready list's right end is the oldest.
    expect(await raw.lrange(backend!.keys.ready, 0, -1)).toEqual([second.id, first.id]);
    const claimed = await backend!.claim({ workerId, limit: 2, leaseMs: 30_000 });
    expect(claimed.map((j) => j.id)).toEqual([first.id, second.id]);
  });

  it("a claim of the same worker sent while a hand-off is written does not deliver the handed job a second time", async () => {
    await setup("handoff-race");
    const workerId = "race-worker";
    expect(await backend!.claim({ workerId, limit: 1, leaseMs: 30_000 })).toEqual([]);
    const { offer, delivered } = fakeOffer(workerId, 2);
    const withdraw = backend!.offerSlots(offer);
    const jobs = [makeJob({ task: "gate.quick" }), makeJob({ task: "gate.quick" })];
    // A claim sent just before the hand-off runs before it; one sent just after runs after it, with the
    // handed ids in the worker's processing list.
    const before = backend!.claim({ workerId, limit: 5, leaseMs: 30_000 });
    const enqueued = backend!.enqueue({ jobs: [jobs[0]!] });
    const after = backend!.claim({ workerId, limit: 5, leaseMs: 30_000 });
    const [claimedBefore, , claimedAfter] = await Promise.all([before, enqueued, after]);
    expect(claimedBefore).toEqual([]);
    expect(claimedAfter).toEqual([]);
    expect(delivered.map((j) => j.id)).toEqual([jobs[0]!.id]);
    // Later claims know the job is the worker's already (the claim answered before the hand-off did not make
    // the backend forget it): it is never handed out as a job whose claim reply was lost.
    expect(await backend!.claim({ workerId, limit: 5, leaseMs: 30_000 })).toEqual([]);
    await backend!.enqueue({ jobs: [jobs[1]!] });
    withdraw();
    expect(delivered.map((j) => j.id)).toEqual(jobs.map((j) => j.id));
    expect(await backend!.claim({ workerId, limit: 5, leaseMs: 30_000 })).toEqual([]);
    for (const job of delivered) await backend!.complete({ workerId, job });
    for (const job of jobs) expect(await stored(job.id)).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("a batch that names one id twice stores it once and hands it over once, to the worker its first copy was for", async () => {
    await setup("handoff-twice");
    const [first, second] = ["twice-worker-1", "twice-worker-2"];
    for (const workerId of [first, second]) expect(await backend!.claim({ workerId, limit: 1, leaseMs: 30_000 })).toEqual([]);
    const one = fakeOffer(first, 1);
    const two = fakeOffer(second, 1);
    const withdraw = [backend!.offerSlots(one.offer), backend!.offerSlots(two.offer)];
    const copies = [makeJob({ task: "gate.quick", id: "twice", payload: { copy: 1 } }), makeJob({ task: "gate.quick", id: "twice", payload: { copy: 2 } })];
    const result = await backend!.enqueue({ jobs: copies });
    for (const w of withdraw) w();
    expect(result.inserted).toEqual(["twice"]);
    expect(one.delivered.map((j) => j.payload)).toEqual([{ copy: 1 }]);
    expect(two.delivered).toEqual([]);
    expect(two.cancelled()).toBe(1);
    expect(await stored("twice")).toEqual({ state: "running", owner: first, attempts: 1 });
    // Neither worker's next claim delivers it (again, or to the wrong one).
    for (const workerId of [first, second]) expect(await backend!.claim({ workerId, limit: 5, leaseMs: 30_000 })).toEqual([]);

    // The same with one worker and two free slots: one copy handed over, one slot given back.
    const three = fakeOffer(first, 2);
    const withdrawThree = backend!.offerSlots(three.offer);
    await backend!.complete({ workerId: first, job: one.delivered[0]! });
    const again = [makeJob({ task: "gate.quick", id: "twice-again" }), makeJob({ task: "gate.quick", id: "twice-again" })];
    expect((await backend!.enqueue({ jobs: again })).inserted).toEqual(["twice-again"]);
    withdrawThree();
    expect(three.delivered.map((j) => j.id)).toEqual(["twice-again"]);
    expect(three.cancelled()).toBe(0);
    expect(await backend!.claim({ workerId: first, limit: 5, leaseMs: 30_000 })).toEqual([]);
  });

  it("an id enqueued again while its job runs on the idle worker stays that worker's, not delivered a second time", async () => {
    await setup("handoff-running");
    const workerId = "running-worker";
    await backend!.enqueue({ jobs: [makeJob({ task: "gate.quick", id: "again-1" })] });
    const [running] = await backend!.claim({ workerId, limit: 1, leaseMs: 30_000 });
    expect(running!.id).toBe("again-1");
    // The worker has a free slot and waits; the same id is enqueued again (an event published twice).
    const { offer, delivered, cancelled } = fakeOffer(workerId, 2);
    const withdraw = backend!.offerSlots(offer);
    expect((await backend!.enqueue({ jobs: [makeJob({ task: "gate.quick", id: "again-1" })] })).inserted).toEqual([]);
    withdraw();
    expect(delivered).toEqual([]);
    expect(cancelled()).toBe(1);
    // Its next claim still knows the running job is held: it is not handed out as a claim whose reply was lost.
    expect(await backend!.claim({ workerId, limit: 5, leaseMs: 30_000 })).toEqual([]);
    await backend!.complete({ workerId, job: running! });
    expect(await stored("again-1")).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("a Job handed over and enqueued again later (no worker idle then) is not written a second time", async () => {
    await setup("handoff-again");
    const workerId = "handed-worker";
    const job = makeJob({ task: "gate.quick" });
    const { offer, delivered } = fakeOffer(workerId, 1);
    const withdraw = backend!.offerSlots(offer);
    await backend!.claim({ workerId, limit: 1, leaseMs: 30_000 });
    expect((await backend!.enqueue({ jobs: [job] })).inserted).toEqual([job.id]);
    withdraw();
    expect(delivered.map((j) => j.id)).toEqual([job.id]);
    // The same object again, through the plain enqueue: its id is stored, so nothing is written over the running job.
    expect((await backend!.enqueue({ jobs: [job] })).inserted).toEqual([]);
    expect(await stored(job.id)).toMatchObject({ state: "running", owner: workerId, attempts: 1 });
  });

  it("a write that fails hands nothing over and frees the reserved slot", async () => {
    const { seen, tasks } = await setup("handoff-fails");
    startWorker(tasks, { concurrency: 1 });
    await idle();
    // The script refuses: the paused-tasks key it reads holds a string instead of a hash.
    await raw.set(backend!.keys.paused, "not a hash");
    const bad = makeJob({ task: "gate.quick" });
    await expect(backend!.enqueue({ jobs: [bad] })).rejects.toMatchObject({ code: expect.stringMatching(/^BACKEND_/) });
    expect(await raw.exists(backend!.keys.job(bad.id))).toBe(0);
    await raw.del(backend!.keys.paused);
    // The one slot is free again: the next job is handed over.
    const good = makeJob({ task: "gate.quick" });
    await backend!.enqueue({ jobs: [good] });
    expect(seen.map((j) => j.id)).toEqual([good.id]);
  });

  it("a worker that stops while a hand-off is written gives the job back unstarted, attempt returned", async () => {
    const { seen, tasks } = await setup("handoff-stop");
    const worker = startWorker(tasks, { concurrency: 1 });
    await idle();
    const job = makeJob({ task: "gate.quick" });
    // The slot is reserved synchronously inside enqueue(); stop() begins before Redis answers.
    const enqueued = backend!.enqueue({ jobs: [job] });
    const stopped = worker.stop({ graceMs: 5_000 });
    await enqueued;
    await stopped;
    expect(seen).toEqual([]);
    expect(await stored(job.id)).toEqual({ state: "ready", owner: null, attempts: 0 });
    expect(await raw.lrange(backend!.keys.ready, 0, -1)).toEqual([job.id]);
  });
});
