import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTask } from "../../src/core/define-task.js";
import { DEFAULT_QUEUE } from "../../src/core/named-queue.js";
import type { PauseStore } from "../../src/core/pause.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { TaskRegistry } from "../../src/core/registry.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMemoryPauseStore } from "../../src/queue/pause-stores.js";
import { PausedTasks } from "../../src/queue/paused-tasks.js";
import { createQueueProvider, type QueueProvider } from "../../src/queue/queue-provider.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually, makeJob, sleep, startTestWorker, type BackendFactory } from "./harness.js";

const QUEUES = [DEFAULT_QUEUE, "email", "media"] as const;
type QueueName = (typeof QUEUES)[number];

/** A gate handlers wait on; `open()` lets every waiting and later one through. */
function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * Named queues (docs/queues.md): one service, three queues, a backend instance each over one store. Jobs go to
 * their task's queue; each queue's worker has its own slots, so a saturated queue never delays another's jobs;
 * pauses, depths and dead letters are each queue's own.
 */
export function describeQueues(factory: BackendFactory): void {
  describe(`${factory.name}: named queues`, () => {
    let backends: Record<QueueName, QueueBackend>;
    let pauseStores: Record<QueueName, PauseStore>;
    let cleanup: () => Promise<void>;
    const workers: Worker[] = [];
    const pausedSets: PausedTasks[] = [];
    const logger = createLogger({ service: "conformance", level: "silent" });

    beforeEach(async () => {
      const opened = await factory.createQueues!(QUEUES);
      backends = opened.backends as Record<QueueName, QueueBackend>;
      cleanup = opened.cleanup;
      pauseStores = Object.fromEntries(
        QUEUES.map((q) => [q, opened.pauses?.[q] ?? (backends[q].capabilities.pauseStore ? backends[q].pauseStore() : createMemoryPauseStore())]),
      ) as Record<QueueName, PauseStore>;
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      for (const set of pausedSets.splice(0)) set.stop();
      await cleanup();
    });

    /** The service's queue provider over these backends, with tasks declared on their queues. */
    function provider(tasks: TaskDefinition[]): QueueProvider {
      const registry = new TaskRegistry();
      for (const t of tasks) registry.register(t);
      return createQueueProvider({
        backend: backends.default,
        name: "conformance",
        registry,
        defaultMaxAttempts: 3,
        namedQueues: (["email", "media"] as const).map((name) => ({
          name,
          backendName: `conformance:${name}`,
          backend: backends[name],
          pauses: null,
          throughput: null,
          maxAttempts: name === "media" ? 1 : 3,
        })),
      });
    }

    function startWorker(queue: QueueName, tasks: TaskDefinition[], concurrency: number, paused?: PausedTasks): Worker {
      const worker = startTestWorker({ backend: backends[queue], tasks, concurrency, pollIntervalMs: 200, paused });
      workers.push(worker);
      return worker;
    }

    async function pausedTasks(queue: QueueName): Promise<PausedTasks> {
      const set = new PausedTasks({ store: pauseStores[queue], logger, refreshMs: 100 });
      await set.start();
      pausedSets.push(set);
      return set;
    }

    it("puts each job in its task's queue: the queue's own depths, untouched by the others", async () => {
      const tasks = [
        defineTask("conf.noop", () => undefined),
        defineTask("mail.send", { queue: "email" }, () => undefined),
        defineTask("media.resize", { queue: "media" }, () => undefined),
      ];
      const queue = provider(tasks);
      await queue.enqueue([
        makeJob({ task: "mail.send" }),
        makeJob({ task: "media.resize" }),
        makeJob({ task: "media.resize" }),
        makeJob({ task: "conf.noop" }),
        makeJob({ task: "media.resize", availableAt: new Date(Date.now() + 60_000) }),
      ]);
      const byQueue = await eventually("every queue's depths", async () => {
        const depths = await queue.depthsByQueue();
        return depths.media!.ready === 2 && depths.media!.scheduled === 1 && depths.email!.ready === 1 && depths.default!.ready === 1 ? depths : null;
      });
      expect(byQueue.email).toEqual({ ready: 1, scheduled: 0, running: 0, dead: 0 });
      expect(byQueue.default).toEqual({ ready: 1, scheduled: 0, running: 0, dead: 0 });
      expect(await queue.depths()).toEqual({ ready: 4, scheduled: 1, running: 0, dead: 0 });
      // A task's jobs take their queue's max_attempts unless the task sets its own.
      const media = makeJob({ task: "media.resize" });
      media.maxAttempts = null;
      expect(queue.prepare(media).maxAttempts).toBe(1);
      expect(queue.queueOf("mail.send").name).toBe("email");
      expect(queue.queueOf("other.service_task").name).toBe(DEFAULT_QUEUE);
      // A worker of the email queue runs the email job and nothing of the others'.
      const ran: string[] = [];
      const recording = tasks.map((t) => defineTask(t.name, t.options, () => void ran.push(t.name)));
      startWorker("email", recording, 4);
      await eventually("the email job done", async () => ran.includes("mail.send"));
      await sleep(300);
      expect(ran).toEqual(["mail.send"]);
      expect((await backends.media.depths()).ready).toBe(2);
    });

    it("holds each queue's concurrency, apart from the other's", async () => {
      const current = { email: 0, media: 0 };
      const most = { email: 0, media: 0 };
      const slow = (queue: "email" | "media") => async () => {
        current[queue]++;
        most[queue] = Math.max(most[queue], current[queue]);
        await sleep(150);
        current[queue]--;
      };
      const tasks = [defineTask("mail.send", { queue: "email" }, slow("email")), defineTask("media.resize", { queue: "media" }, slow("media"))];
      const queue = provider(tasks);
      await queue.enqueue([...Array.from({ length: 8 }, () => makeJob({ task: "media.resize" })), ...Array.from({ length: 8 }, () => makeJob({ task: "mail.send" }))]);
      const email = startWorker("email", tasks, 3);
      const media = startWorker("media", tasks, 2);
      await eventually("all sixteen done", async () => email.processedCount + media.processedCount === 16, 30_000);
      expect(most.media).toBe(2);
      expect(most.email).toBe(3);
      expect(email.processedCount).toBe(8);
      expect(media.processedCount).toBe(8);
    });

    it("runs another queue's jobs at once while one queue's slots are all taken", async () => {
      const held = gate();
      let mediaStarted = 0;
      const mailDone: number[] = [];
      const tasks = [
        defineTask("media.resize", { queue: "media" }, async () => {
          mediaStarted++;
          await held.wait;
        }),
        defineTask("mail.send", { queue: "email" }, () => void mailDone.push(Date.now())),
      ];
      const queue = provider(tasks);
      startWorker("media", tasks, 1);
      startWorker("email", tasks, 2);
      try {
        await queue.enqueue(Array.from({ length: 5 }, () => makeJob({ task: "media.resize" })));
        await eventually("the media slot taken", async () => mediaStarted === 1);
        const enqueuedAt = Date.now();
        await queue.enqueue(Array.from({ length: 3 }, () => makeJob({ task: "mail.send" })));
        await eventually("the email jobs done", async () => mailDone.length === 3);
        // Well within the poll interval's reach: the email worker was not waiting behind media's backlog.
        expect(Math.max(...mailDone) - enqueuedAt).toBeLessThan(5000);
        expect(mediaStarted).toBe(1);
        const media = await backends.media.depths();
        expect(media.running + media.ready).toBe(5);
      } finally {
        held.open();
      }
      await eventually("the media backlog drained", async () => mediaStarted === 5, 30_000);
    });

    it("pausing a task of one queue leaves the other queue running, and resume runs the held jobs", async () => {
      const ran: string[] = [];
      const tasks = [
        defineTask("media.resize", { queue: "media" }, () => void ran.push("media")),
        defineTask("mail.send", { queue: "email" }, () => void ran.push("email")),
      ];
      const queue = provider(tasks);
      const operator = await pausedTasks("media");
      await operator.pause({ task: "media.resize", by: "conformance" });
      expect((await (await pausedTasks("email")).store.list()).length).toBe(0);
      startWorker("media", tasks, 2, await pausedTasks("media"));
      startWorker("email", tasks, 2, await pausedTasks("email"));
      await queue.enqueue([makeJob({ task: "media.resize" }), makeJob({ task: "mail.send" }), makeJob({ task: "mail.send" })]);
      await eventually("the email jobs done", async () => ran.filter((r) => r === "email").length === 2);
      await sleep(700);
      expect(ran).not.toContain("media");
      await operator.resume({ task: "media.resize" });
      await eventually("the media job done after resume", async () => ran.includes("media"));
    });

    it("keeps each queue's dead letters apart: listed, counted and retried per queue", async () => {
      let fail = true;
      const tasks = [
        defineTask("media.resize", { queue: "media" }, () => {
          if (fail) throw new PermanentError("corrupt image");
        }),
        defineTask("mail.send", { queue: "email" }, () => undefined),
      ];
      const queue = provider(tasks);
      const job = makeJob({ task: "media.resize" });
      await queue.enqueue([job, makeJob({ task: "mail.send" })]);
      startWorker("media", tasks, 1);
      startWorker("email", tasks, 1);
      const dead = await eventually("the media job dead", async () => {
        const rows = await backends.media.listDead({ limit: 10 });
        return rows.length === 1 ? rows : null;
      });
      expect(dead[0]!.job.id).toBe(job.id);
      expect(dead[0]!.lastError?.message).toBe("corrupt image");
      expect(await backends.email.listDead({ limit: 10 })).toEqual([]);
      expect(await backends.default.listDead({ limit: 10 })).toEqual([]);
      const depths = await eventually("dead counted in media only", async () => {
        const d = await queue.depthsByQueue();
        return d.media!.dead === 1 ? d : null;
      });
      expect(depths.email!.dead).toBe(0);
      expect(depths.default!.dead).toBe(0);
      // Another queue does not know the id; the job's own queue requeues it.
      expect(await backends.email.retryDead({ ids: [job.id] })).toEqual({ retried: [], missing: [job.id] });
      fail = false;
      expect(await backends.media.retryDead({ ids: [job.id] })).toEqual({ retried: [job.id], missing: [] });
      await eventually("the retried job done", async () => (await backends.media.depths()).dead === 0 && (await backends.media.depths()).ready === 0 && (await backends.media.depths()).running === 0);
    });
  });
}
