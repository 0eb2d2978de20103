import { afterEach, describe, expect, it } from "vitest";
import { createRedisBackend, type RedisBackend, type RedisBackendOptions } from "../../src/backends/redis/redis-backend.js";
import { makeJob, sleep } from "../conformance/harness.js";
import { startPrivateRedis, type PrivateRedis } from "../outbox/outbox-env.js";
import { uniqueQueue } from "./redis-test-env.js";

/**
 * Completions of one worker are batched: those that arrive while a complete.lua call is in flight go together in
 * the next call. Each test runs on a redis-server of its own, so INFO commandstats counts this backend's script
 * calls and nobody else's.
 */
describe("redis: batched completions", () => {
  let redis: PrivateRedis | null = null;
  const backends: RedisBackend[] = [];

  afterEach(async () => {
    await Promise.all(backends.splice(0).map((b) => b.close()));
    await redis?.stop();
    redis = null;
  });

  async function open(options: Partial<RedisBackendOptions> = {}): Promise<{ backend: RedisBackend; url: string; queue: string }> {
    redis ??= await startPrivateRedis();
    const queue = uniqueQueue("complete-batch");
    // A heartbeat TTL of ten minutes: no sweep script runs on the timer while the test counts script calls.
    const backend = createRedisBackend({ url: redis.url, queue, workerTtlMs: 600_000, ...options });
    await backend.setup();
    backends.push(backend);
    return { backend, url: redis.url, queue };
  }

  async function scriptCalls(): Promise<number> {
    const info = String(await redis!.command("INFO", "commandstats"));
    let calls = 0;
    for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(m[1]);
    return calls;
  }

  async function field(backend: RedisBackend, id: string, name: string): Promise<string | null> {
    return (await redis!.command("HGET", backend.keys.job(id), name)) as string | null;
  }

  it("settles many concurrent completions in fewer script calls than jobs, and still refuses a job the worker lost", async () => {
    const { backend } = await open();
    // w1's lease on `lost` runs out and w2 claims it: from then on w2 owns it.
    const lost = makeJob({ task: "batch.lost" });
    await backend.enqueue({ jobs: [lost] });
    expect((await backend.claim({ workerId: "w1", limit: 1, leaseMs: 1 })).map((j) => j.id)).toEqual([lost.id]);
    await sleep(20);
    expect((await backend.claim({ workerId: "w2", limit: 1, leaseMs: 600_000 })).map((j) => j.id)).toEqual([lost.id]);

    const jobs = Array.from({ length: 21 }, () => makeJob({ task: "batch.done" }));
    await backend.enqueue({ jobs });
    const claimed = await backend.claim({ workerId: "w1", limit: 21, leaseMs: 600_000 });
    expect(claimed).toHaveLength(21);
    // The script is cached on the server (EVALSHA, no EVAL fallback) before counting.
    await backend.complete({ workerId: "w1", job: claimed[0]! });

    const before = await scriptCalls();
    const rest = claimed.slice(1);
    // The stale completion sits in the middle of the owned ones, so it is written in the same call as they are.
    const batch = [...rest.slice(0, 10), lost, ...rest.slice(10)];
    await Promise.all(batch.map((job) => backend.complete({ workerId: "w1", job })));
    const calls = (await scriptCalls()) - before;

    // The first completion is written at once; the 20 that arrived while it was in flight went in one more call.
    expect(calls).toBe(2);
    expect(calls).toBeLessThan(batch.length);
    for (const job of claimed) expect(await field(backend, job.id, "state")).toBe("completed");
    expect(await redis!.command("LLEN", backend.keys.processing("w1"))).toBe(0);
    // Refused in that same call: still w2's running job, lease and processing list entry untouched.
    expect(await field(backend, lost.id, "state")).toBe("running");
    expect(await field(backend, lost.id, "owner")).toBe("w2");
    expect(await redis!.command("LRANGE", backend.keys.processing("w2"), "0", "-1")).toEqual([lost.id]);
    expect(await redis!.command("ZSCORE", backend.keys.running, lost.id)).not.toBeNull();
    expect(await backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 1, dead: 0 });
  });

  it("close() writes completions still waiting for their call before it returns the worker's jobs", async () => {
    const { backend, url, queue } = await open({ completedRetentionMs: 0 });
    const jobs = Array.from({ length: 5 }, () => makeJob({ task: "batch.close" }));
    await backend.enqueue({ jobs });
    const claimed = await backend.claim({ workerId: "w1", limit: 5, leaseMs: 600_000 });
    expect(claimed).toHaveLength(5);
    // Not awaited: one call is in flight and four wait for the next when close() starts.
    const completions = claimed.map((job) => backend.complete({ workerId: "w1", job }));
    await backend.close();
    await Promise.all(completions);

    const after = createRedisBackend({ url, queue, workerTtlMs: 600_000 });
    await after.setup();
    backends.push(after);
    // keep_completed = false: settled jobs are gone. Had close() returned the list first, they would be ready again.
    expect(await after.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 0 });
    for (const job of jobs) expect(await after.getJob({ id: job.id })).toBeNull();
  });

  it("prunes completed jobs past their retention from a batched call", async () => {
    const { backend } = await open({ completedRetentionMs: 200 });
    const old = Array.from({ length: 3 }, () => makeJob({ task: "batch.old" }));
    await backend.enqueue({ jobs: old });
    for (const job of await backend.claim({ workerId: "w1", limit: 3, leaseMs: 600_000 })) await backend.complete({ workerId: "w1", job });
    expect(await redis!.command("ZCARD", backend.keys.completed)).toBe(3);
    await sleep(300);

    const fresh = Array.from({ length: 4 }, () => makeJob({ task: "batch.fresh" }));
    await backend.enqueue({ jobs: fresh });
    const claimed = await backend.claim({ workerId: "w1", limit: 4, leaseMs: 600_000 });
    await Promise.all(claimed.map((job) => backend.complete({ workerId: "w1", job })));

    expect(((await redis!.command("ZRANGE", backend.keys.completed, "0", "-1")) as string[]).sort()).toEqual(fresh.map((j) => j.id).sort());
    for (const job of old) expect(await backend.getJob({ id: job.id })).toBeNull();
    for (const job of fresh) expect((await backend.getJob({ id: job.id }))?.state).toBe("completed");
  });
});
