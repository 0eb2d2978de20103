import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { queueKeys } from "../../src/backends/redis/keys.js";
import { Job } from "../../src/core/job.js";
import { makeJob } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

/**
 * A job's hash (docs/redis.md#keys): `attempts` and `errors` are stored beside the JSON only once they differ from
 * what the JSON says, so a job that waits for its first attempt holds neither (lib.lua store_job); every reader
 * takes an absent one from the JSON.
 */
describe("redis: the fields of a job's hash", () => {
  const opened: RedisBackend[] = [];
  let queue = "";
  const redis = rawClient();

  afterEach(async () => {
    for (const backend of opened.splice(0)) await backend.close();
    await dropQueue(queue);
  });
  afterAll(() => redis.disconnect());

  async function open(label: string): Promise<RedisBackend> {
    queue = uniqueQueue(label);
    const backend = await openBackend(queue);
    opened.push(backend);
    return backend;
  }

  async function fields(id: string): Promise<string[]> {
    return Object.keys(await redis.hgetall(queueKeys({ queue }).job(id))).sort();
  }

  it("stores a new job without attempts and errors, and reads it back with 0 and none", async () => {
    const backend = await open("hash-new");
    const plain = makeJob();
    const urgent = makeJob({ priority: 1 });
    const later = makeJob({ availableAt: new Date(Date.now() + 60_000) });
    const unique = makeJob({ unique: { key: "one" } });
    await backend.enqueue({ jobs: [plain, urgent, later, unique] });

    expect(await fields(plain.id)).toEqual(["available_at", "json", "max_attempts", "state"]);
    expect(await fields(urgent.id)).toEqual(["available_at", "json", "max_attempts", "priority", "state"]);
    expect(await fields(later.id)).toEqual(["available_at", "json", "max_attempts", "state"]);
    expect(await fields(unique.id)).toEqual(["available_at", "json", "max_attempts", "state"]);
    for (const job of [plain, urgent, later, unique]) {
      const info = await backend.getJob({ id: job.id });
      expect(info?.job.attempts).toBe(0);
      expect(info?.job.errors).toEqual([]);
    }
  });

  it("counts the attempt at the claim and records the error of a retry beside the JSON", async () => {
    const backend = await open("hash-retry");
    const job = makeJob();
    await backend.enqueue({ jobs: [job] });
    const [claimed] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000, pausedTasks: [] });
    expect(claimed?.attempts).toBe(1);
    expect(claimed?.errors).toEqual([]);
    expect(await redis.hget(queueKeys({ queue }).job(job.id), "attempts")).toBe("1");

    const error = { attempt: 1, at: new Date().toISOString(), class: "Error", message: "the first try failed" };
    await backend.retry({ workerId: "w1", job: claimed!, error, availableAt: new Date() });
    expect(JSON.parse((await redis.hget(queueKeys({ queue }).job(job.id), "errors"))!)).toEqual([error]);
    const [again] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000, pausedTasks: [] });
    expect(again?.attempts).toBe(2);
    expect(again?.errors).toEqual([error]);
  });

  it("keeps attempts and errors of a job enqueued with a history, and reads them from the hash", async () => {
    const backend = await open("hash-history");
    const error = { attempt: 2, at: new Date(0).toISOString(), class: "Error", message: "an earlier life" };
    const job = Job.fromJSON({ ...makeJob().toJSON(), attempts: 2, errors: [error] });
    await backend.enqueue({ jobs: [job] });
    expect(await fields(job.id)).toEqual(["attempts", "available_at", "errors", "json", "max_attempts", "state"]);
    const [claimed] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000, pausedTasks: [] });
    expect(claimed?.attempts).toBe(3);
    expect(claimed?.errors).toEqual([error]);
  });

  it("stores a batch of new jobs sharing their attempts limit as one of different limits, field for field", async () => {
    const backend = await open("hash-compact");
    // One limit for all: sent as three arguments a job (enqueue.lua's compact form); two limits: six a job.
    const shared = [makeJob({ maxAttempts: 4 }), makeJob({ maxAttempts: 4, priority: 2 }), makeJob({ maxAttempts: 4, availableAt: new Date(Date.now() + 60_000) })];
    const mixed = [makeJob({ maxAttempts: 4 }), makeJob({ maxAttempts: 4, priority: 2 }), makeJob({ maxAttempts: 7, availableAt: new Date(Date.now() + 60_000) })];
    await backend.enqueue({ jobs: shared });
    await backend.enqueue({ jobs: mixed });
    const hash = (id: string) => redis.hgetall(queueKeys({ queue }).job(id));
    for (let i = 0; i < 3; i++) {
      const [a, b] = [await hash(shared[i]!.id), await hash(mixed[i]!.id)];
      expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
      expect(a.state).toBe(b.state);
      expect(a.priority).toBe(b.priority);
      expect(JSON.parse(a.json!)).toEqual(shared[i]!.toJSON());
      expect(JSON.parse(b.json!)).toEqual(mixed[i]!.toJSON());
      expect(Number(a.available_at)).toBe(shared[i]!.availableAt.getTime());
    }
    expect((await hash(shared[2]!.id)).max_attempts).toBe("4");
    expect((await hash(mixed[2]!.id)).max_attempts).toBe("7");
    // Claimed in priority order, each with its own limit and no attempt made before.
    const claimed = await backend.claim({ workerId: "w1", limit: 10, leaseMs: 30_000, pausedTasks: [] });
    expect(claimed.map((job) => [job.id, job.maxAttempts, job.attempts])).toEqual([
      [shared[1]!.id, 4, 1],
      [mixed[1]!.id, 4, 1],
      [shared[0]!.id, 4, 1],
      [mixed[0]!.id, 4, 1],
    ]);
  });

  it("writes a batch of new jobs without asking whether each exists, and the same jobs again (a retry) not twice", async () => {
    const backend = await open("hash-fresh");
    const jobs = [makeJob(), makeJob(), makeJob({ priority: 2 })];
    const first = await backend.enqueue({ jobs });
    expect(first.inserted).toEqual(jobs.map((job) => job.id));
    // Claimed and changed in between: an enqueue of the same Job objects must leave the stored jobs as they are.
    const [claimed] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000, pausedTasks: [] });
    expect(claimed?.id).toBe(jobs[2]!.id);
    const again = await backend.enqueue({ jobs });
    expect(again.inserted).toEqual([]);
    expect(await redis.hget(queueKeys({ queue }).job(jobs[2]!.id), "state")).toBe("running");
    expect(await redis.hget(queueKeys({ queue }).job(jobs[2]!.id), "attempts")).toBe("1");
    const rest = await backend.claim({ workerId: "w1", limit: 10, leaseMs: 30_000, pausedTasks: [] });
    expect(rest.map((job) => job.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
  });

  it("reads a hash written with both fields (by an earlier version) as before", async () => {
    const backend = await open("hash-older");
    const job = makeJob();
    await backend.enqueue({ jobs: [job] });
    await redis.hset(queueKeys({ queue }).job(job.id), "attempts", "0", "errors", "[]");
    expect((await backend.getJob({ id: job.id }))?.job.attempts).toBe(0);
    const [claimed] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000, pausedTasks: [] });
    expect(claimed?.attempts).toBe(1);
    expect(claimed?.errors).toEqual([]);
  });
});
