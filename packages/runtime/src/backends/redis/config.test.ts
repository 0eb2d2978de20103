import { describe, expect, it } from "vitest";
import { DEFAULT_RETENTION } from "../../core/retention.js";
import { redisQueue } from "./config.js";

const config = redisQueue.resolve({ backend: "redis", url: "redis://a:6379", cluster: false, wait_replicas: 1, wait_timeout: 0.25 }, { file: "jfast.toml", env: {} });
const queue = (completed: (typeof DEFAULT_RETENTION)["completed"], keepCompleted = true) => ({
  backendName: "billing.jobs:media",
  keepCompleted,
  retention: { ...DEFAULT_RETENTION, completed },
});

describe("the Redis queue's options", () => {
  it("carry the url, the queue's name and the replica wait", () => {
    expect(redisQueue.toOptions(config, queue(DEFAULT_RETENTION.completed))).toMatchObject({
      url: "redis://a:6379",
      queue: "billing.jobs:media",
      cluster: false,
      waitReplicas: 1,
      waitTimeoutMs: 250,
    });
  });

  it("let complete.lua expire completed jobs by age only; kept by count or forever they never expire, and none are kept with keep_completed = false", () => {
    const completedMs = (completed: (typeof DEFAULT_RETENTION)["completed"], keep?: boolean) => redisQueue.toOptions(config, queue(completed, keep)).completedRetentionMs;
    expect(completedMs({ kind: "age", ms: 3_600_000 })).toBe(3_600_000);
    expect(completedMs({ kind: "age", ms: 0 })).toBe(1);
    expect(completedMs({ kind: "count", count: 10 })).toBe(100 * 365 * 86_400_000);
    expect(completedMs({ kind: "forever" })).toBe(100 * 365 * 86_400_000);
    expect(completedMs({ kind: "age", ms: 3_600_000 }, false)).toBe(0);
  });

  it("take REDIS_URL over the file's url and refuse none", () => {
    const section = { backend: "redis" as const, url: "redis://file", cluster: false, wait_replicas: 0, wait_timeout: 1 };
    expect(redisQueue.resolve(section, { file: "jfast.toml", env: { REDIS_URL: "redis://env" } }).url).toBe("redis://env");
    expect(() => redisQueue.resolve({ ...section, url: undefined }, { file: "jfast.toml", env: {} })).toThrow(/backend = "redis" needs a url/);
  });
});
