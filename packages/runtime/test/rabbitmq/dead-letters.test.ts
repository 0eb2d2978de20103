import { afterEach, describe, expect, it } from "vitest";
import { errorToAttempt, Job } from "../../src/core/job.js";
import type { RabbitMqBackend } from "../../src/backends/rabbitmq/rabbitmq-backend.js";
import { NotSupportedError } from "../../src/errors/jfast-error.js";
import { dropQueue, openBackend, uniqueQueue, withRawChannel } from "./rabbitmq-test-env.js";

let backend: RabbitMqBackend | null = null;
let queue = "";

afterEach(async () => {
  await backend?.close();
  backend = null;
  await dropQueue(queue);
});

async function kill(b: RabbitMqBackend, jobs: Job[], message: (job: Job) => string): Promise<void> {
  for (const job of jobs) {
    const [claimed] = await b.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    if (!claimed || claimed.id !== job.id) throw new Error(`expected ${job.id}, claimed ${claimed?.id}`);
    await b.kill({ workerId: "w", job: claimed, error: errorToAttempt(new Error(message(claimed)), claimed.attempts) });
    // Distinct times of death (the list is ordered by them).
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function makeJobs(count: number): Job[] {
  return Array.from({ length: count }, (_, i) => new Job({ task: "dead.probe", payload: { i }, id: `job-${i}`, maxAttempts: 1, tenantId: null }));
}

async function deadInBroker(name: string): Promise<number> {
  return withRawChannel(async (channel) => (await channel.checkQueue(`${name}.dead`)).messageCount);
}

describe("rabbitmq: dead letters in <queue>.dead", () => {
  it("lists newest death first, pages by offset, and leaves every message in the queue", async () => {
    queue = uniqueQueue("dead-order");
    backend = await openBackend(queue);
    const jobs = makeJobs(12);
    await backend.enqueue({ jobs });
    await kill(backend, jobs, (j) => `died ${(j.payload as { i: number }).i}`);

    const all = await backend.listDead({ limit: 100 });
    expect(all.map((d) => d.job.id)).toEqual([...jobs].reverse().map((j) => j.id));
    for (let i = 1; i < all.length; i++) expect(Date.parse(all[i - 1]!.diedAt)).toBeGreaterThanOrEqual(Date.parse(all[i]!.diedAt));
    expect(all[0]!.lastError).toMatchObject({ class: "Error", message: "died 11" });

    const page = await backend.listDead({ limit: 5, offset: 5 });
    expect(page.map((d) => d.job.id)).toEqual(all.slice(5, 10).map((d) => d.job.id));

    // Browsing took the messages and put them back: the broker still holds all twelve.
    expect(await deadInBroker(queue)).toBe(12);
    // Concurrent lists in one process take turns and each sees everything.
    const lists = await Promise.all([backend.listDead({ limit: 100 }), backend.listDead({ limit: 100 }), backend.listDead({ limit: 100 })]);
    for (const list of lists) expect(list.map((d) => d.job.id)).toEqual(all.map((d) => d.job.id));
    expect(await deadInBroker(queue)).toBe(12);
  });

  it("dead-letters a job whose error history is larger than a frame: headers cut, the body keeps every error whole", async () => {
    queue = uniqueQueue("dead-long-errors");
    backend = await openBackend(queue);
    // Six attempts of 8 KiB messages of 3-byte characters: 144 KiB of history, past the broker's 128 KiB frame.
    const job = new Job({ task: "dead.probe", payload: {}, id: "long-errors", maxAttempts: 6, tenantId: null });
    await backend.enqueue({ jobs: [job] });
    const message = "€".repeat(8000);
    for (let attempt = 1; attempt <= 6; attempt++) {
      // The broker pushes the retried message back a moment later: claim until it has arrived.
      let claimed: Job | undefined;
      for (const until = Date.now() + 15_000; !claimed && Date.now() < until; ) {
        [claimed] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
        if (!claimed) await new Promise((r) => setTimeout(r, 20));
      }
      expect(claimed?.id).toBe(job.id);
      const error = errorToAttempt(new Error(message), claimed!.attempts);
      if (attempt < 6) await backend.retry({ workerId: "w", job: claimed!, error, availableAt: new Date() });
      else await backend.kill({ workerId: "w", job: claimed!, error });
    }
    const [dead] = await backend.listDead({ limit: 5 });
    expect(dead?.job.id).toBe(job.id);
    expect(dead!.job.errors.map((e) => e.message)).toEqual(Array(6).fill(message));
    const headers = await withRawChannel(async (channel) => {
      const got = await channel.get(`${queue}.dead`, { noAck: false });
      if (!got) throw new Error("no dead letter in the broker");
      channel.nack(got, false, true);
      return got.properties.headers as Record<string, unknown>;
    });
    expect((headers["x-jfast-error"] as string).length).toBeLessThan(1100);
    expect(headers["x-jfast-errors"]).toHaveLength(6);
    expect(JSON.stringify(headers).length).toBeLessThan(8 * 1024);
  });

  it("orders by time of death, not queue position: a job retried and killed again moves to the top", async () => {
    queue = uniqueQueue("dead-again");
    backend = await openBackend(queue);
    const jobs = makeJobs(3);
    await backend.enqueue({ jobs });
    await kill(backend, jobs, () => "first death");
    expect((await backend.retryDead({ ids: ["job-0"] })).retried).toEqual(["job-0"]);
    await kill(backend, [jobs[0]!], () => "second death");
    const list = await backend.listDead({ limit: 10 });
    expect(list.map((d) => d.job.id)).toEqual(["job-0", "job-2", "job-1"]);
    expect(list[0]!.job.errors.map((e) => e.message)).toEqual(["first death", "second death"]);
    expect(list[0]!.job.attempts).toBe(1);
  });

  it("retries everything with attempts reset", async () => {
    queue = uniqueQueue("dead-retry-all");
    backend = await openBackend(queue);
    const jobs = makeJobs(5);
    await backend.enqueue({ jobs });
    await kill(backend, jobs, () => "boom");
    const result = await backend.retryDead({ all: true });
    expect(result.retried.sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(await deadInBroker(queue)).toBe(0);
    const again: Job[] = [];
    const deadline = Date.now() + 10_000;
    while (again.length < 5 && Date.now() < deadline) again.push(...(await backend.claim({ workerId: "w", limit: 5, leaseMs: 30_000 })));
    expect(again.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const job of again) {
      expect(job.attempts).toBe(1);
      expect(job.errors.map((e) => e.message)).toEqual(["boom"]);
    }
  });

  it("looks up dead letters and this process's running jobs by id; a waiting job cannot be looked up", async () => {
    queue = uniqueQueue("dead-get");
    backend = await openBackend(queue);
    const [deadJob, runningJob, waitingJob] = makeJobs(3);
    await backend.enqueue({ jobs: [deadJob!] });
    await kill(backend, [deadJob!], () => "gone");
    await backend.enqueue({ jobs: [runningJob!] });
    const [running] = await backend.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    expect(running!.id).toBe(runningJob!.id);
    await backend.enqueue({ jobs: [new Job({ task: "dead.probe", id: waitingJob!.id, delayMs: 60_000, tenantId: null })] });

    expect(await backend.getJob({ id: deadJob!.id })).toMatchObject({ state: "dead", job: { id: deadJob!.id, attempts: 1 } });
    expect(await backend.getJob({ id: runningJob!.id })).toMatchObject({ state: "running", lockedBy: "w", job: { attempts: 1 } });
    await expect(backend.getJob({ id: waitingJob!.id })).rejects.toBeInstanceOf(NotSupportedError);
  });
});
