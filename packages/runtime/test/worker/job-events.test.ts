import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import type { JobEventMap, JobEventName } from "../../src/core/job-events.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import type { AppWorker } from "../../src/worker/worker-group.js";
import { dropSchema, eventually, openTestBackend, PG_URL, silentLogger, sleep, uniqueSchema } from "../postgres/pg-test-env.js";

/**
 * The job events a service listens to with `jfast.on` (docs/observability.md#job-events): each attempt's claim, start and end, in
 * order, with what happened, on the memory queue and on PostgreSQL.
 */
const EVENTS: JobEventName[] = ["job:enqueued", "job:claimed", "job:started", "job:completed", "job:failed", "job:dead", "job:snoozed", "job:cancelled", "job:released", "job:expired"];

type Seen = { [E in JobEventName]: { name: E; event: JobEventMap[E] } }[JobEventName];

const BACKENDS = {
  memory: () => ({ toml: `[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\nvisibility_timeout = 1\n`, schema: null }),
  postgres: () => {
    const schema = uniqueSchema("events");
    return {
      toml: `[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n[plugin.queue]\nbackend = "postgres"\nvisibility_timeout = 1\n`,
      schema,
    };
  },
} as const;

for (const [backend, make] of Object.entries(BACKENDS)) {
  describe(`job events (${backend})`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** An app with `tasks`, a listener on every event, and a started worker. */
    async function app(tasks: TaskDefinition[]): Promise<{ jfast: Jfast; worker: AppWorker; seen: Seen[]; of(id: string): string[] }> {
      const { toml, schema } = make();
      const dir = await mkdtemp(path.join(tmpdir(), "jfast-events-"));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      if (schema) cleanups.push(() => dropSchema(schema));
      await writeFile(path.join(dir, "jfast.toml"), `[service]\nname = "events"\n${toml}`);
      const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks });
      await jfast.start();
      cleanups.push(() => jfast.stop());
      const seen: Seen[] = [];
      for (const name of EVENTS) jfast.on(name, (event) => void seen.push({ name, event } as Seen));
      const worker = jfast.createWorker({ concurrency: 2 });
      worker.start();
      cleanups.push(() => worker.stop({ graceMs: 0 }));
      return { jfast, worker, seen, of: (id) => seen.filter((s) => s.event.job.id === id).map((s) => s.name) };
    }

    it("a job that succeeds: enqueued, claimed, started, completed with the handler's value", async () => {
      const ok = defineTask("events.ok", async (payload: { n: number }) => ({ doubled: payload.n * 2 }));
      const { jfast, worker, seen, of } = await app([ok]);
      const job = ok.job({ n: 21 });
      await jfast.require("queue").enqueue(job);
      await eventually("the job completed", async () => of(job.id).includes("job:completed"));
      expect(of(job.id)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:completed"]);
      const byName = <E extends JobEventName>(name: E) => seen.find((s) => s.name === name && s.event.job.id === job.id)!.event as JobEventMap[E];
      expect(byName("job:enqueued")).toMatchObject({ queue: "default", duplicate: false });
      const claimed = byName("job:claimed");
      expect(claimed).toMatchObject({ queue: "default", workerId: worker.id });
      expect(claimed.claimedAt).toBeGreaterThanOrEqual(job.availableAt.getTime());
      const completed = byName("job:completed");
      expect(completed).toMatchObject({ queue: "default", workerId: worker.id, value: { doubled: 42 } });
      expect(completed.durationMs).toBeGreaterThanOrEqual(0);
      expect(completed.job.payload).toEqual({ n: 21 });
    });

    it("a job claimed after its task's deadline: expired with the reason, never started; debounced jobs fold into one", async () => {
      const ran: unknown[] = [];
      const quote = defineTask("events.quote", { expiresInMs: 50 }, async () => undefined);
      const reindex = defineTask("events.reindex", { debounce: { key: (p: { doc: string; v: number }) => p.doc, delayMs: 200 } }, async (payload) => {
        ran.push(payload);
      });
      const { jfast, worker, seen, of } = await app([quote, reindex]);
      const queue = jfast.require("queue");
      // Due only after its task's expiresInMs has passed: the claim that reaches it is late.
      const late = quote.job(undefined, { delayMs: 300 });
      await queue.enqueue(late);
      await eventually("the job expired", async () => of(late.id).includes("job:expired"));
      expect(of(late.id)).toEqual(["job:enqueued", "job:expired"]);
      const expired = seen.find((s) => s.name === "job:expired")!.event as JobEventMap["job:expired"];
      expect(expired).toMatchObject({ queue: "default", workerId: worker.id, attemptError: { class: "JobExpired", reason: "expired", attempt: 0 } });
      // The event fires once the outcome is handed over; its write may still be in flight (docs/observability.md).
      await eventually("the job recorded expired", async () => (await queue.backend.getJob({ id: late.id }))?.state === "expired");

      const first = await queue.enqueue(reindex.job({ doc: "d1", v: 1 }));
      const second = await queue.enqueue(reindex.job({ doc: "d1", v: 2 }));
      expect(second.jobs).toEqual([{ id: first.jobs[0]!.id, duplicate: true }]);
      await eventually("the folded job ran", async () => ran.length === 1);
      expect(ran).toEqual([{ doc: "d1", v: 2 }]);
    });

    it("a job that fails once: failed with the error and when it comes back, then a second attempt that completes", async () => {
      let calls = 0;
      const flaky = defineTask("events.flaky", { maxAttempts: 3, backoffBaseMs: 10 }, async () => {
        calls++;
        if (calls === 1) throw new Error("first attempt fails");
        return "second time lucky";
      });
      const { jfast, seen, of } = await app([flaky]);
      const job = flaky.job({});
      await jfast.require("queue").enqueue(job);
      await eventually("the job completed", async () => of(job.id).includes("job:completed"), 15_000);
      expect(of(job.id)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:failed", "job:claimed", "job:started", "job:completed"]);
      const failed = seen.find((s) => s.name === "job:failed")!.event as JobEventMap["job:failed"];
      expect(failed.error).toBeInstanceOf(Error);
      expect((failed.error as Error).message).toBe("first attempt fails");
      expect(failed.attemptError).toMatchObject({ attempt: 1, message: "first attempt fails" });
      expect(failed.retryAt).toBeInstanceOf(Date);
      expect(failed.retryAt!.getTime()).toBeGreaterThan(Date.now() - 60_000);
      const completed = seen.find((s) => s.name === "job:completed")!.event as JobEventMap["job:completed"];
      expect(completed.value).toBe("second time lucky");
      expect(completed.job.attempts).toBe(2);
    });

    it("a job whose attempts are spent: failed with no retry, then dead (exhausted); a permanent error: dead at once (permanent)", async () => {
      const broken = defineTask("events.broken", { maxAttempts: 1 }, async () => {
        throw new Error("always fails");
      });
      const refused = defineTask("events.refused", { maxAttempts: 5 }, async () => {
        throw new PermanentError("never valid");
      });
      const { jfast, seen, of } = await app([broken, refused]);
      const exhausted = broken.job({});
      const permanent = refused.job({});
      await jfast.require("queue").enqueue([exhausted, permanent]);
      await eventually("both dead", async () => of(exhausted.id).includes("job:dead") && of(permanent.id).includes("job:dead"));
      expect(of(exhausted.id)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:failed", "job:dead"]);
      expect(of(permanent.id)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:failed", "job:dead"]);
      const failed = seen.find((s) => s.name === "job:failed" && s.event.job.id === exhausted.id)!.event as JobEventMap["job:failed"];
      expect(failed.retryAt).toBeNull();
      const dead = (id: string) => seen.find((s) => s.name === "job:dead" && s.event.job.id === id)!.event as JobEventMap["job:dead"];
      expect(dead(exhausted.id)).toMatchObject({ reason: "exhausted", attemptError: { attempt: 1, message: "always fails" } });
      expect(dead(permanent.id)).toMatchObject({ reason: "permanent", attemptError: { class: "PermanentError" } });
    });

    it("a job cancelled while it runs: cancelled after started, and nothing after it", async () => {
      const waits = defineTask("events.waits", async (_payload: unknown, { signal }) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        throw signal.reason;
      });
      const { jfast, of } = await app([waits]);
      const job = waits.job({});
      await jfast.require("queue").enqueue(job);
      await eventually("the job started", async () => of(job.id).includes("job:started"));
      await jfast.require("queue").cancel(job.id);
      await eventually("the job cancelled", async () => of(job.id).includes("job:cancelled"), 15_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(of(job.id)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:cancelled"]);
    });

    it("a job running at shutdown: released, started true, attempt not spent", async () => {
      const slow = defineTask("events.slow", async (_payload: unknown, { signal }) => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      });
      const { jfast, worker, seen, of } = await app([slow]);
      const job = slow.job({});
      await jfast.require("queue").enqueue(job);
      await eventually("the job started", async () => of(job.id).includes("job:started"));
      await worker.stop({ graceMs: 0 });
      expect(of(job.id)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:released"]);
      expect(seen.at(-1)!.event).toMatchObject({ started: true, workerId: worker.id });
    });
  });
}

describe("job event listeners", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("a listener that throws fails nothing: the job completes and the other listeners run; off() removes a listener", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-events-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, "jfast.toml"), `[service]\nname = "events"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    const ok = defineTask("events.ok", async () => "done");
    const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: [ok] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const completed: string[] = [];
    const removed: string[] = [];
    jfast.on("job:completed", () => {
      throw new Error("a broken listener");
    });
    jfast.on("job:completed", async () => {
      throw new Error("a broken async listener");
    });
    jfast.on("job:completed", ({ job }) => void completed.push(job.id));
    const unsubscribe = jfast.on("job:started", ({ job }) => void removed.push(job.id));
    const listener = ({ job }: JobEventMap["job:claimed"]) => void removed.push(job.id);
    jfast.on("job:claimed", listener);
    unsubscribe();
    jfast.off("job:claimed", listener);
    const worker = jfast.createWorker({ concurrency: 1 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    const job = new Job({ task: "events.ok", payload: {} });
    await jfast.require("queue").enqueue(job);
    await eventually("the job completed", async () => completed.includes(job.id));
    expect((await jfast.require("queue").backend.getJob({ id: job.id }))?.state).toBe("completed");
    expect(removed).toEqual([]);
  });
});

/**
 * PostgreSQL hands a job over to an idle worker of the enqueuing process as it inserts it: the worker may claim and
 * run it before the enqueue's caller hears back (a busy event loop, a slow reply). `job:enqueued` still comes first.
 */
describe("job events: a job handed over in process (postgres)", () => {
  it("is announced enqueued before it is claimed, even when the enqueue's caller hears back after the job ended", async () => {
    const { schema, backend, database } = await openTestBackend();
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-events-"));
    const insert = backend.enqueue.bind(backend);
    let answered = 0;
    // The reply reaches the caller late: the insert (and its hand-off) is done, the continuation is not.
    backend.enqueue = async (input) => {
      const result = await insert(input);
      await sleep(300);
      answered += 1;
      return result;
    };
    try {
      await writeFile(
        path.join(dir, "jfast.toml"),
        `[service]\nname = "events"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\n`,
      );
      const broken = defineTask("events.handed", { maxAttempts: 1 }, async () => {
        throw new Error("always fails");
      });
      const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: [broken], backend });
      await jfast.start();
      try {
        const seen: { name: JobEventName; id: string; duplicate?: boolean }[] = [];
        for (const name of EVENTS) jfast.on(name, (event) => void seen.push({ name, id: event.job.id, ...("duplicate" in event ? { duplicate: event.duplicate } : {}) }));
        const worker = jfast.createWorker({ concurrency: 2 });
        worker.start();
        try {
          await sleep(200); // idle: its free slots are offered for a hand-off
          const job = broken.job({});
          const enqueued = jfast.require("queue").enqueue(job);
          await eventually("the handed-over job dead before its enqueue answered", async () => seen.some((s) => s.name === "job:dead"));
          expect(answered).toBe(0);
          await enqueued;
          expect(seen.map((s) => s.name)).toEqual(["job:enqueued", "job:claimed", "job:started", "job:failed", "job:dead"]);
          expect(seen.every((s) => s.id === job.id)).toBe(true);
          expect(seen[0]).toMatchObject({ duplicate: false });
        } finally {
          await worker.stop({ graceMs: 0 });
        }
      } finally {
        await jfast.stop();
      }
    } finally {
      await database.close();
      await dropSchema(schema);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
