import { afterEach, describe, expect, it, vi } from "vitest";
import { Job } from "../../src/core/job.js";
import { WORKER_LOST } from "../../src/core/queue-backend.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { eventually } from "../../src/testing/eventually.js";
import { dropQueue, openBackend, uniqueQueue } from "./rabbitmq-test-env.js";

let backend: RabbitMqBackend | null = null;
let queue = "";

afterEach(async () => {
  vi.useRealTimers();
  await backend?.close();
  backend = null;
  await dropQueue(queue);
});

describe("rabbitmq: the in-process lease", () => {
  it("gives back a job whose lease timer fired before Date.now() reached the lease's end, once it has", async () => {
    queue = uniqueQueue("lease-timer");
    backend = await openBackend(queue);
    const job = new Job({ task: "conf.busy", payload: {}, maxAttempts: 3, tenantId: null });
    await backend.enqueue({ jobs: [job] });
    const [first] = await eventually("the first claim", async () => {
      const claimed = await backend!.claim({ workerId: "busy-worker", limit: 1, leaseMs: 30_000 });
      return claimed.length ? claimed : null;
    });
    expect(first!.attempts).toBe(1);

    // A timer runs on the monotonic clock, the lease's end is read from Date.now(): the two can disagree by a
    // millisecond (rounding) or more (a clock slewed by NTP), and a timer then fires while Date.now() says the
    // lease still runs. Freezing Date makes that disagreement last until the clock is given back.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    await backend.extendLeases({ workerId: "busy-worker", jobIds: [job.id], leaseMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    vi.useRealTimers();

    const [again] = await eventually(
      "the job back as a lost attempt",
      async () => {
        const claimed = await backend!.claim({ workerId: "next-worker", limit: 1, leaseMs: 30_000 });
        return claimed.length ? claimed : null;
      },
      10_000,
    );
    expect(again!.id).toBe(job.id);
    expect(again!.attempts).toBe(2);
    expect(again!.errors.at(-1)).toMatchObject({ attempt: 1, reason: WORKER_LOST });
  });
});
