import { afterEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { defineTask } from "../../src/core/define-task.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import type { Worker } from "../../src/worker/worker.js";
import { eventually } from "../../src/testing/eventually.js";
import { dropQueue, openBackend, startWorker, uniqueQueue } from "./rabbitmq-test-env.js";

const backends: RabbitMqBackend[] = [];
const workers: Worker[] = [];
let queue = "";

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
  await Promise.all(backends.splice(0).map((b) => b.close()));
  await dropQueue(queue);
});

/** Jobs that start and then wait for the test to let them finish. */
function gatedTask(name: string) {
  const started: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const definition = defineTask(name, async (_payload, { job }) => {
    started.push(job.id);
    await gate;
  });
  return { definition, started, open };
}

async function run(prefetch: number): Promise<{ readyWhileBusy: number; started: number; completed: number }> {
  queue = uniqueQueue("push-ahead");
  // The test's own backend only enqueues and counts: it never consumes, so the broker's counts are the worker's.
  const observer = await openBackend(queue);
  const consuming = await openBackend(queue);
  backends.push(observer, consuming);
  const gated = gatedTask("push.gated");
  const jobs = Array.from({ length: 20 }, () => new Job({ task: "push.gated", payload: {} }));
  await observer.enqueue({ jobs });
  const worker = startWorker(consuming, [gated.definition], { concurrency: 2, prefetch });
  workers.push(worker);

  // Both slots busy: the broker holds back everything beyond the slots and the pushed-ahead jobs.
  await eventually("both slots busy", async () => gated.started.length === 2);
  const readyWhileBusy = await eventually("the broker's ready count settles", async () => {
    const ready = (await observer.depths()).ready;
    return ready === 20 - 2 - prefetch ? ready : null;
  });
  const started = gated.started.length;
  gated.open();
  await eventually("every job done", async () => (await observer.depths()).ready === 0 && worker.processedCount === 20);
  return { readyWhileBusy, started, completed: worker.processedCount };
}

describe("rabbitmq: what the broker pushes ahead of a busy worker", () => {
  it("pushes `prefetch` jobs beyond the worker's slots, which wait unstarted until a slot frees", async () => {
    const result = await run(5);
    expect(result).toEqual({ readyWhileBusy: 13, started: 2, completed: 20 });
  });

  it("with prefetch 0 pushes no more than the worker's slots", async () => {
    const result = await run(0);
    expect(result).toEqual({ readyWhileBusy: 18, started: 2, completed: 20 });
  });
});
