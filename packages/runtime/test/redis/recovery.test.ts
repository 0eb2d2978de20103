import { randomUUID } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { WORKER_LOST } from "../../src/core/queue-backend.js";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { eventually, makeJob, sleep } from "../conformance/harness.js";
import { startWorkerProcess, type WorkerProcess } from "./process-harness.js";
import { dropQueue, openBackend, rawClient, REDIS_URL, uniqueQueue } from "./redis-test-env.js";

/** Workers that die for real (kill -9 of a Node process) and what happens to the jobs they held. */
describe("redis: recovery of vanished workers", { timeout: 180_000 }, () => {
  const backends: RedisBackend[] = [];
  const processes: WorkerProcess[] = [];
  const queues: string[] = [];
  const raw = rawClient();

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.kill()));
    await Promise.all(backends.splice(0).map((b) => b.close()));
    await Promise.all(queues.splice(0).map((q) => dropQueue(q)));
  });
  afterAll(() => raw.disconnect());

  async function backend(queue: string, workerTtlMs: number): Promise<RedisBackend> {
    const b = await openBackend(queue, { workerTtlMs });
    backends.push(b);
    return b;
  }

  function newQueue(label: string): string {
    const queue = uniqueQueue(label);
    queues.push(queue);
    return queue;
  }

  async function claimInProcess(queue: string, settings: { workerId: string; workerTtlMs: number; claim: number }): Promise<{ proc: WorkerProcess; claimed: string[] }> {
    // A lease of ten minutes: whatever brings these jobs back sooner is the heartbeat, not the lease.
    const proc = startWorkerProcess({ mode: "claim-and-hang", url: REDIS_URL, queue, leaseMs: 600_000, ...settings });
    processes.push(proc);
    const line = await proc.first;
    return { proc, claimed: line.claimed as string[] };
  }

  it("returns the jobs of a worker whose heartbeat expired, long before their lease, and not while it lives", async () => {
    const queue = newQueue("vanished");
    const live = await backend(queue, 600);
    const jobs = [makeJob(), makeJob(), makeJob()];
    await live.enqueue({ jobs });
    const ghostId = `ghost-${randomUUID().slice(0, 6)}`;
    const { proc, claimed } = await claimInProcess(queue, { workerId: ghostId, workerTtlMs: 600, claim: 3 });
    expect(claimed.sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(await raw.llen(live.keys.processing(ghostId))).toBe(3);

    // Alive and heartbeating: three TTLs later the live backend's sweeps have left its jobs alone.
    await sleep(1800);
    expect((await live.depths()).running).toBe(3);
    expect(await raw.exists(live.keys.worker(ghostId))).toBe(1);

    await proc.kill();
    // Within 10 s, far below the ten-minute lease: the heartbeat TTL (600 ms) plus one sweep.
    await eventually("the vanished worker's jobs back on the ready list", async () => (await live.depths()).ready === 3, 10_000);
    expect(await raw.exists(live.keys.processing(ghostId))).toBe(0);
    expect(await raw.zscore(live.keys.workers, ghostId)).toBeNull();

    const again = await live.claim({ workerId: "survivor", limit: 5, leaseMs: 30_000 });
    expect(again.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const job of again) {
      expect(job.attempts).toBe(2);
      expect(job.errors).toHaveLength(1);
      expect(job.errors[0]).toMatchObject({ attempt: 1, reason: WORKER_LOST, class: "WorkerLost" });
    }
  });

  it("dead-letters a poison pill whose worker process dies on every attempt, with reason 'worker lost'", async () => {
    const queue = newQueue("poison");
    const live = await backend(queue, 400);
    const job = makeJob({ task: "crash.poison", maxAttempts: 2 });
    await live.enqueue({ jobs: [job] });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const { proc, claimed } = await claimInProcess(queue, { workerId: `doomed-${attempt}-${randomUUID().slice(0, 6)}`, workerTtlMs: 400, claim: 1 });
      expect(claimed).toEqual([job.id]);
      await proc.kill();
      if (attempt === 1) await eventually("the job back after the first death", async () => (await live.depths()).ready === 1);
    }
    const dead = await eventually("the poison pill in dead letters", async () => {
      const list = await live.listDead({ limit: 5 });
      return list.length ? list : null;
    });
    expect(dead[0]!.job.id).toBe(job.id);
    expect(dead[0]!.job.attempts).toBe(2);
    expect(dead[0]!.lastError?.reason).toBe(WORKER_LOST);
    expect(dead[0]!.job.errors.map((e) => [e.attempt, e.reason])).toEqual([
      [1, WORKER_LOST],
      [2, WORKER_LOST],
    ]);
    expect(await live.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 1 });
  });

  it("a worker restarted under the same id first returns what its previous process left in its list", async () => {
    const queue = newQueue("same-id");
    const workerId = `stable-${randomUUID().slice(0, 6)}`;
    const seed = await backend(queue, 60_000);
    const job = makeJob();
    await seed.enqueue({ jobs: [job] });
    // A long TTL: nobody else would notice this death for a minute.
    const { proc } = await claimInProcess(queue, { workerId, workerTtlMs: 60_000, claim: 1 });
    await proc.kill();
    const restarted = await backend(queue, 60_000);
    const [again] = await restarted.claim({ workerId, limit: 1, leaseMs: 30_000 });
    expect(again?.id).toBe(job.id);
    expect(again!.attempts).toBe(2);
    expect(again!.errors.map((e) => e.reason)).toEqual([WORKER_LOST]);
    expect(await raw.lrange(restarted.keys.processing(workerId), 0, -1)).toEqual([job.id]);
  });

  it("on close, returns whatever is left in the closing worker's own processing list", async () => {
    const queue = newQueue("close");
    const b = await openBackend(queue, { workerTtlMs: 60_000 });
    const jobs = [makeJob(), makeJob()];
    await b.enqueue({ jobs });
    expect(await b.claim({ workerId: "leaving", limit: 2, leaseMs: 600_000 })).toHaveLength(2);
    await b.close();
    const other = await backend(queue, 60_000);
    expect(await raw.exists(other.keys.processing("leaving"))).toBe(0);
    const again = await other.claim({ workerId: "next", limit: 5, leaseMs: 30_000 });
    expect(again.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(again.every((j) => j.attempts === 2 && j.errors[0]?.reason === WORKER_LOST)).toBe(true);
  });

  it("hands a job out again when the reply to the claim that leased it never arrived", async () => {
    const queue = newQueue("lost-reply");
    const b = await backend(queue, 60_000);
    const job = makeJob();
    await b.enqueue({ jobs: [job] });
    const [first] = await b.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    expect(first!.attempts).toBe(1);
    // Redis ran that claim, but suppose its answer was lost with the connection: the process does not hold it.
    b["q"].held.get("w")!.clear();
    const [redelivered] = await b.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
    expect(redelivered?.id).toBe(job.id);
    // Same attempt: it was counted once and never ran.
    expect(redelivered!.attempts).toBe(1);
    expect(redelivered!.errors).toEqual([]);
    // Now held: not handed out a third time.
    expect(await b.claim({ workerId: "w", limit: 1, leaseMs: 30_000 })).toEqual([]);
    expect(await b.claim({ workerId: "someone-else", limit: 1, leaseMs: 30_000 })).toEqual([]);
  });
});
