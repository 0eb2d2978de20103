import { readFileSync } from "node:fs";
import { openConnection } from "../../backends/redis/connection.js";
import { BackendError } from "../../errors/jfast-error.js";
import { scheduleKeys, type ScheduleKeys } from "./redis-keys.js";
import type { EnqueueJobs, ScheduleStore, StoredSchedule } from "./schedule-store.js";

const SCRIPTS = ["claim-tick", "release-tick", "prune-claims", "tick-claims"] as const;
type ScriptName = (typeof SCRIPTS)[number];
const PRUNE_BATCH = 10_000;
/** Claims made before a window looked at to tell whether a schedule is older than the window. */
const EARLIER_SCAN = 5000;

export interface RedisScheduleStore extends ScheduleStore {
  readonly keys: ScheduleKeys;
}

/**
 * Claims in Redis, for the Redis queue: claim (a Lua script, atomic), then enqueue. A failed enqueue
 * releases the claim for the next pass; a process that dies between the two loses that tick. The job id is
 * derived from schedule and tick, so even a double enqueue would be one job.
 */
export function createRedisScheduleStore(params: {
  url: string;
  /** `url` lists seed nodes of a Redis Cluster: both keys share the queue's hash tag, so each script runs on one node. */
  cluster?: boolean;
  queue: string;
  prefix?: string;
  enqueue: EnqueueJobs;
  now?: () => number;
}): RedisScheduleStore {
  const keys = scheduleKeys({ queue: params.queue, ...(params.prefix ? { prefix: params.prefix } : {}) });
  const now = params.now ?? Date.now;
  // The queue's own connection rules (one node, or a Cluster through its seeds), but a command fails after a few
  // reconnect attempts instead of waiting long: the scheduler records the error (readiness degrades) and retries
  // the tick on its next pass. Reconnection is ioredis' job; failures surface on the commands, where they are
  // translated.
  const redis = openConnection({
    url: params.url,
    ...(params.cluster ? { cluster: true } : {}),
    queue: params.queue,
    role: "scheduler",
    maxRetriesPerRequest: 3,
    onError: () => undefined,
  });
  for (const name of SCRIPTS) {
    const lua = readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), "utf8");
    redis.defineCommand(commandName(name), { numberOfKeys: 2, lua });
  }
  const run = async <T>(operation: string, name: ScriptName, args: Array<string | number>): Promise<T> => {
    try {
      const command = (redis as unknown as Record<string, (...a: unknown[]) => Promise<T>>)[commandName(name)]!;
      return await command.call(redis, keys.last, keys.claims, ...args);
    } catch (error) {
      throw translate(error, operation, params.url);
    }
  };

  return {
    kind: "redis",
    keys,
    async serverTime() {
      let time: [string, string];
      try {
        time = (await redis.time()) as unknown as [string, string];
      } catch (error) {
        throw translate(error, "read the server's time", params.url);
      }
      return Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    },
    async lastTicks({ names }) {
      if (names.length === 0) return new Map();
      let values: (string | null)[];
      try {
        values = await redis.hmget(keys.last, ...names);
      } catch (error) {
        throw translate(error, "read the last ticks", params.url);
      }
      const found = new Map<string, number>();
      names.forEach((name, i) => {
        const value = values[i];
        if (value !== null && value !== undefined) found.set(name, Number(value));
      });
      return found;
    },
    async claim({ name, tick, job }) {
      const [won, previous] = await run<[number, string]>("claim a tick", "claim-tick", [name, tick, now()]);
      if (Number(won) !== 1) return false;
      try {
        await params.enqueue([job]);
      } catch (error) {
        // If the release fails too, the tick stays claimed and is lost; the enqueue error is the one to report.
        await run("release a tick", "release-tick", [name, tick, previous]).catch(() => undefined);
        throw error;
      }
      return true;
    },
    async tickClaims({ name, from, to }) {
      const [claimed, first, before] = await run<[number, number, number]>("count claimed ticks", "tick-claims", [name, from, to, EARLIER_SCAN]);
      return { claimed: Number(claimed), first: Number(first) < 0 ? null : Number(first), before: Number(before) === 1 };
    },
    async prune({ before }) {
      return Number(await run<number>("prune old claims", "prune-claims", [before, PRUNE_BATCH]));
    },
    async schedules() {
      let entries: Record<string, string>;
      try {
        entries = await redis.hgetall(keys.stored);
      } catch (error) {
        throw translate(error, "read the stored schedules", params.url);
      }
      return Object.values(entries).map((json) => JSON.parse(json) as StoredSchedule);
    },
    async saveSchedule({ schedule, create }) {
      try {
        const json = JSON.stringify(schedule);
        if (create) return (await redis.hsetnx(keys.stored, schedule.name, json)) === 1;
        await redis.hset(keys.stored, schedule.name, json);
        return true;
      } catch (error) {
        throw translate(error, "store a schedule", params.url);
      }
    },
    async deleteSchedule({ name }) {
      try {
        return (await redis.hdel(keys.stored, name)) === 1;
      } catch (error) {
        throw translate(error, "delete a schedule", params.url);
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}

function commandName(script: ScriptName): string {
  return `jfastSchedule_${script.replace(/-/g, "_")}`;
}

function translate(error: unknown, operation: string, url: string): BackendError {
  const text = error instanceof Error ? error.message : String(error);
  return new BackendError(`the scheduler could not ${operation} in Redis at ${redact(url)}: ${text}`, {
    hint: "start Redis or fix [plugin.queue] url / REDIS_URL; the tick stays unclaimed and the next pass retries it",
    docs: "jfast docs scheduler#stores",
    cause: error,
  });
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}
