import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors/jfast-error.js";
import { DEFAULT_RETENTION, parseDuration } from "../core/retention.js";
import { resolveConfig } from "./load-config.js";

function resolve(queue: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const data = { service: { name: "billing" }, plugins: { enabled: ["queue"] }, plugin: { queue: { backend: "memory", ...queue } }, ...extra };
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env: {} }).queue!;
}

function refusal(queue: Record<string, unknown>, extra: Record<string, unknown> = {}): ConfigError {
  try {
    resolve(queue, extra);
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error("the configuration was accepted");
}

describe("[plugin.queue] keep_completed, keep_dead, keep_cancelled", () => {
  it("default to a day of completed jobs, 30 days of dead letters and 7 days of cancelled jobs, pruned every minute", () => {
    const queue = resolve({});
    expect(queue.retention).toEqual(DEFAULT_RETENTION);
    expect(queue.retention).toEqual({
      completed: { kind: "age", ms: 86_400_000 },
      dead: { kind: "age", ms: 30 * 86_400_000 },
      cancelled: { kind: "age", ms: 7 * 86_400_000 },
      // Expired jobs (docs/flow-control.md#deadlines) are kept as cancelled ones.
      expired: { kind: "age", ms: 7 * 86_400_000 },
    });
    expect(queue.keepCompleted).toBe(true);
    expect(queue.pruneIntervalMs).toBe(60_000);
  });

  it("take true (the default), false (none), a duration, a count or \"forever\"", () => {
    const queue = resolve({ keep_completed: 10_000, keep_dead: "forever", keep_cancelled: "90s", prune_interval: "15m" });
    expect(queue.retention).toEqual({ completed: { kind: "count", count: 10_000 }, dead: { kind: "forever" }, cancelled: { kind: "age", ms: 90_000 }, expired: { kind: "age", ms: 90_000 } });
    expect(queue.pruneIntervalMs).toBe(900_000);
    const none = resolve({ keep_completed: false, keep_dead: false, keep_cancelled: true });
    expect(none.keepCompleted).toBe(false);
    expect(none.retention).toEqual({ completed: { kind: "age", ms: 0 }, dead: { kind: "age", ms: 0 }, cancelled: DEFAULT_RETENTION.cancelled, expired: DEFAULT_RETENTION.cancelled });
    expect(resolve({ keep_completed: 0 }).keepCompleted).toBe(false);
  });

  it("read durations in ms, s, m, h, d and w", () => {
    expect(["500ms", "90s", "15m", "24h", "7d", "2w", "1.5h"].map(parseDuration)).toEqual([500, 90_000, 900_000, 86_400_000, 604_800_000, 1_209_600_000, 5_400_000]);
    expect(["7", "7 days", "-1d", "d", ""].map(parseDuration)).toEqual([null, null, null, null, null]);
  });

  it("refuse a retention that is not one, naming the key, the fix and the docs", () => {
    const error = refusal({ keep_dead: "30 days" });
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain('[plugin.queue] keep_dead = "30 days" is not a retention');
    expect(error.hint).toContain('"7d"');
    expect(error.docs).toBe("jfast docs queues#retention");
    expect(refusal({ keep_completed: -1 }).message).toContain("keep_completed");
    expect(refusal({ prune_interval: "0s" }).message).toContain("prune_interval");
  });

  it("are overridden per named queue, the rest taken from [plugin.queue]", () => {
    const queue = resolve({ keep_dead: "60d" }, { queues: { media: { concurrency: 2, keep_completed: false, keep_dead: 500 } } });
    const [base, media] = queue.queues;
    expect(base!.retention.dead).toEqual({ kind: "age", ms: 60 * 86_400_000 });
    expect(base!.keepCompleted).toBe(true);
    expect(media!.retention).toEqual({ completed: { kind: "age", ms: 0 }, dead: { kind: "count", count: 500 }, cancelled: DEFAULT_RETENTION.cancelled, expired: DEFAULT_RETENTION.cancelled });
    expect(media!.keepCompleted).toBe(false);
    expect(refusal({}, { queues: { media: { keep_cancelled: "soon" } } }).message).toContain("[queues.media] keep_cancelled");
  });
});
