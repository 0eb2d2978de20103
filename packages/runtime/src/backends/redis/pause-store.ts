import type { RedisClient } from "./connection.js";
import type { PausedTask, PauseStore } from "../../core/pause.js";
import type { QueueKeys } from "./keys.js";

/**
 * Paused tasks of a Redis queue, in its own keys so that claim.lua reads them in the same atomic step that
 * takes a job off the ready list: `<stem>:paused` (task → JSON { at, by }), and per paused task the list of
 * jobs the claim parked (keys.ts). Pausing only writes the hash; the claim parks lazily. Resuming removes the
 * task and puts its parked jobs back in one script (resume.lua).
 */
export function createRedisPauseStore(params: {
  keys: QueueKeys;
  /** Runs a plain command through the backend's error translation. */
  guard: <T>(operation: string, fn: (redis: RedisClient) => Promise<T>) => Promise<T>;
  resume: (args: ReadonlyArray<string | number>) => Promise<unknown>;
}): PauseStore {
  const { keys, guard } = params;
  return {
    kind: "redis",
    async list() {
      const entries = await guard("list paused tasks", (redis) => redis.hgetall(keys.paused));
      return Object.entries(entries)
        .map(([task, value]) => decode(task, value))
        .sort((a, b) => a.task.localeCompare(b.task));
    },
    async pause({ task, by }) {
      const entry: PausedTask = { task, pausedAt: new Date().toISOString(), pausedBy: by };
      const stored = await guard("pause a task", async (redis) => {
        await redis.hsetnx(keys.paused, task, JSON.stringify({ at: entry.pausedAt, by }));
        return redis.hget(keys.paused, task);
      });
      return stored === null ? entry : decode(task, stored);
    },
    async resume({ task }) {
      const [was] = (await params.resume([keys.paused, keys.parked(task), task])) as [number, number];
      return Number(was) === 1;
    },
  };
}

function decode(task: string, value: string): PausedTask {
  try {
    const parsed = JSON.parse(value) as { at?: unknown; by?: unknown };
    return { task, pausedAt: typeof parsed.at === "string" ? parsed.at : new Date(0).toISOString(), pausedBy: typeof parsed.by === "string" ? parsed.by : null };
  } catch {
    return { task, pausedAt: new Date(0).toISOString(), pausedBy: null };
  }
}
