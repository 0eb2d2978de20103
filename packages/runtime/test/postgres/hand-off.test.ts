import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createMemoryPauseStore } from "../../src/queue/pause-stores.js";
import { PausedTasks } from "../../src/queue/paused-tasks.js";
import type { Worker } from "../../src/worker/worker.js";
import { countingHandOffs, makeJob, expectOwnCopyHandedOver, startTestWorker } from "../conformance/harness.js";
import { eventually, openTestBackend, PG_URL, silentLogger, sleep, withAdmin } from "./pg-test-env.js";

/**
 * The in-process hand-off (docs/postgres.md#in-process-hand-off): a job enqueued next to an idle worker of the
 * same process is stored already claimed by it and handed over in memory. Whether a job went that way is read
 * from the outside: a listener on the queue's channel hears a NOTIFY for every job stored ready, and none for a
 * job handed over; the row of a handed-over job is `running`, leased to the worker, before its handler ends.
 */
describe("postgres: in-process hand-off to an idle worker", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  let listener: pg.Client | null = null;
  const workers: Worker[] = [];
  const pausedSets: PausedTasks[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    for (const set of pausedSets.splice(0)) set.stop();
    await listener?.end();
    listener = null;
    await env?.cleanup();
    env = null;
  });

  /** A backend, a listener counting the queue's notifications, and a gate the `gate.wait` handler blocks on. */
  async function setup() {
    env = await openTestBackend();
    const notifications: number[] = [];
    listener = new pg.Client({ connectionString: PG_URL });
    await listener.connect();
    listener.on("notification", () => notifications.push(Date.now()));
    await listener.query(`LISTEN "${env.backend.channel}"`);
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
    return { env, notifications, open, seen, tasks: [wait, quick] };
  }

  function startWorker(tasks: TaskDefinition[], options: { concurrency: number; paused?: PausedTasks; backend?: QueueBackend }): Worker {
    // A long poll interval: anything found sooner was handed over or woken, not polled.
    const worker = startTestWorker({ backend: options.backend ?? env!.backend, tasks, concurrency: options.concurrency, pollIntervalMs: 60_000, paused: options.paused });
    workers.push(worker);
    return worker;
  }

  /** The worker sleeps in waitForWork with its slots offered. */
  async function idle(): Promise<void> {
    await eventually("the worker waits for work", async () => (env!.backend as unknown as { q: { offers: { size: number } } }).q.offers.size > 0);
  }

  async function rows() {
    return env!.database.sql.query<{ id: string; state: string; locked_by: string | null; attempts: number; claimed: boolean }>(
      "SELECT id, state, locked_by, attempts, claimed_at IS NOT NULL AS claimed FROM jfast_jobs ORDER BY seq",
    );
  }

  /** Notifications arrive within milliseconds of a commit; this long without one means none was sent. */
  const QUIET_MS = 300;

  it("a job enqueued next to an idle worker is stored claimed by it and runs with no NOTIFY and no claim", async () => {
    const { notifications, open, seen, tasks } = await setup();
    const worker = startWorker(tasks, { concurrency: 2 });
    await idle();
    const job = makeJob({ task: "gate.wait", payload: { n: 1 } });
    await env!.backend.enqueue({ jobs: [job] });
    // The handler started before enqueue returned: no wake-up, no claim in between.
    expect(seen.map((j) => j.id)).toEqual([job.id]);
    expect(await rows()).toEqual([{ id: job.id, state: "running", locked_by: worker.id, attempts: 1, claimed: true }]);
    await sleep(QUIET_MS);
    expect(notifications).toEqual([]);
    expect(seen[0]!.attempts).toBe(1);
    open();
    await eventually("the job completed", async () => (await rows())[0]?.state === "completed");
  });

  it("hands over the handler its own copy of the job; the caller's object is left as it was", async () => {
    const { seen, tasks } = await setup();
    startWorker(tasks, { concurrency: 1 });
    await idle();
    await expectOwnCopyHandedOver((job) => env!.backend.enqueue({ jobs: [job] }), seen);
  });

  it("hands over no more jobs than free slots; the rest are stored ready and wake the workers", async () => {
    const { notifications, open, seen, tasks } = await setup();
    const worker = startWorker(tasks, { concurrency: 2 });
    await idle();
    const jobs = Array.from({ length: 5 }, (_, i) => makeJob({ task: "gate.wait", payload: { i } }));
    await env!.backend.enqueue({ jobs });
    // The first two (enqueue order) were handed over: their handlers started before enqueue returned, their rows
    // are leased to the worker. The other three were stored ready: the commit sent a NOTIFY (the worker may
    // claim them into its buffer at any moment from here on, so their rows are not read).
    expect(seen.map((j) => j.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
    const stored = await rows();
    expect(stored.slice(0, 2).map((r) => [r.id, r.state, r.locked_by])).toEqual(jobs.slice(0, 2).map((j) => [j.id, "running", worker.id]));
    await eventually("a NOTIFY for the ready jobs", async () => notifications.length === 1);
    open();
    await eventually("all five completed", async () => (await rows()).every((r) => r.state === "completed"), 20_000);
    expect(seen.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(seen.every((j) => j.attempts === 1)).toBe(true);
  });

  it("leaves a bulk batch (over 2 000 jobs) to the table, where the worker claims it", async () => {
    const { notifications, seen, tasks } = await setup();
    const counted = countingHandOffs(env!.backend);
    startWorker(tasks, { concurrency: 4, backend: counted.backend });
    await idle();
    const jobs = Array.from({ length: 2500 }, () => makeJob({ task: "gate.quick" }));
    await env!.backend.enqueue({ jobs });
    // Nothing was handed over: every row was stored ready, and the commit woke the worker.
    expect(counted.handedOver()).toBe(0);
    await eventually("a NOTIFY for the batch", async () => notifications.length === 1);
    await eventually("all 2 500 ran", async () => seen.length === 2500, 30_000);
  });

  it("never hands over a delayed job, a paused task's job, a job whose id was given, or one written through an executor", async () => {
    const { notifications, seen, tasks } = await setup();
    const store = createMemoryPauseStore();
    await store.pause({ task: "gate.wait", by: null });
    const paused = new PausedTasks({ store, logger: silentLogger, refreshMs: 100 });
    await paused.start();
    pausedSets.push(paused);
    startWorker(tasks, { concurrency: 4, paused });
    await idle();
    const cases: Array<[string, Job, (job: Job) => Promise<unknown>]> = [
      ["delayed", makeJob({ task: "gate.quick", delayMs: 60_000 }), (job) => env!.backend.enqueue({ jobs: [job] })],
      ["paused task", makeJob({ task: "gate.wait" }), (job) => env!.backend.enqueue({ jobs: [job] })],
      ["id given", makeJob({ task: "gate.quick", id: "given-id-1" }), (job) => env!.backend.enqueue({ jobs: [job] })],
      // enqueueWithin writes through the caller's executor (their transaction, as outbox.enqueue does).
      ["executor", makeJob({ task: "gate.quick" }), (job) => env!.backend.enqueueWithin({ executor: env!.database.sql, jobs: [job] })],
    ];
    for (const [what, job, enqueue] of cases) {
      const before = notifications.length;
      await enqueue(job);
      await eventually(`a NOTIFY for the ${what} job (stored ready, not handed over)`, async () => notifications.length === before + 1);
      await idle();
    }
    // The two that may run now were claimed the usual way, after their NOTIFY; the others wait.
    await eventually("the id-given and executor jobs ran", async () => seen.length === 2);
    expect(seen.map((j) => j.id).sort()).toEqual([cases[2]![1].id, cases[3]![1].id].sort());
    const states = Object.fromEntries((await rows()).map((r) => [r.id, r.state]));
    expect(states[cases[0]![1].id]).toBe("ready");
    expect(states[cases[1]![1].id]).toBe("ready");
  });

  it("a write that fails hands nothing over and frees the reserved slot", async () => {
    const { notifications, seen, tasks } = await setup();
    startWorker(tasks, { concurrency: 1 });
    await idle();
    // The server refuses the insert: a trigger of this test's schema raises for one task.
    await withAdmin(async (c) => {
      await c.query(`CREATE FUNCTION "${env!.schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.task = 'gate.refused' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await c.query(`CREATE TRIGGER refuse BEFORE INSERT ON "${env!.schema}".jfast_jobs FOR EACH ROW EXECUTE FUNCTION "${env!.schema}".refuse()`);
    });
    const bad = makeJob({ task: "gate.refused" });
    await expect(env!.backend.enqueue({ jobs: [bad] })).rejects.toMatchObject({ code: "BACKEND_QUERY_FAILED" });
    expect(await rows()).toEqual([]);
    // The one slot is free again: the next job is handed over.
    const good = makeJob({ task: "gate.quick" });
    await env!.backend.enqueue({ jobs: [good] });
    expect(seen.map((j) => j.id)).toEqual([good.id]);
    await sleep(QUIET_MS);
    expect(notifications).toEqual([]);
  });

  it("a worker that stops while a hand-off is written gives the job back unstarted, attempt returned", async () => {
    const { seen, tasks } = await setup();
    const worker = startWorker(tasks, { concurrency: 1 });
    await idle();
    const job = makeJob({ task: "gate.quick" });
    // The slot is reserved synchronously inside enqueue(); stop() begins before the insert commits.
    const enqueued = env!.backend.enqueue({ jobs: [job] });
    const stopped = worker.stop({ graceMs: 5_000 });
    await enqueued;
    await stopped;
    expect(seen).toEqual([]);
    const [row] = await rows();
    expect(row).toMatchObject({ id: job.id, state: "ready", locked_by: null, attempts: 0 });
  });
});
