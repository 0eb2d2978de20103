import { isForgotten, type WorkerRecord, type WorkerStore } from "../../core/backend/workers.js";
import type { RedisClient } from "./connection.js";
import type { QueueKeys } from "./keys.js";

/**
 * The worker registry of a Redis queue: one hash (keys.ts `registry`, in the queue's slot like every key of it),
 * a field per worker holding its JSON record. Each heartbeat sets its field and pushes the key's expiry to its
 * forget time, so a queue whose workers all vanished loses the key; a forgotten field among live ones is dropped by
 * the next heartbeat or read.
 */
export function createRedisWorkerStore(params: {
  keys: QueueKeys;
  guard: <T>(operation: string, fn: (redis: RedisClient) => Promise<T>) => Promise<T>;
}): WorkerStore {
  const { keys, guard } = params;
  const read = (redis: RedisClient) => redis.hgetall(keys.registry);
  /** The live records, and the fields of forgotten or unreadable ones. */
  const sort = (hash: Record<string, string>) => {
    const live: WorkerRecord[] = [];
    const forgotten: string[] = [];
    const now = Date.now();
    for (const [id, text] of Object.entries(hash)) {
      const record = parse(text);
      if (record && !isForgotten(record, now)) live.push(record);
      else forgotten.push(id);
    }
    return { live, forgotten };
  };
  return {
    kind: "redis",
    async beat(record) {
      await guard("write the worker registry", async (redis) => {
        const { live, forgotten } = sort(await read(redis));
        const pipeline = redis.pipeline().hset(keys.registry, record.id, JSON.stringify(record));
        // Long enough for the worker kept longest (forget times may differ between processes).
        pipeline.pexpire(keys.registry, Math.max(record.forgetAfterMs, ...live.map((r) => r.forgetAfterMs)));
        const drop = forgotten.filter((id) => id !== record.id);
        if (drop.length > 0) pipeline.hdel(keys.registry, ...drop);
        const results = await pipeline.exec();
        const failed = results?.find(([error]) => error);
        if (failed) throw failed[0];
      });
    },
    async remove({ id }) {
      await guard("leave the worker registry", (redis) => redis.hdel(keys.registry, id));
    },
    async list() {
      return guard("read the worker registry", async (redis) => sort(await read(redis)).live);
    },
  };
}

function parse(text: string): WorkerRecord | null {
  try {
    const record = JSON.parse(text) as WorkerRecord;
    if (typeof record?.id !== "string" || typeof record.heartbeatAt !== "string" || !Array.isArray(record.running)) return null;
    return { ...record, runningSince: Array.isArray(record.runningSince) ? record.runningSince : [] };
  } catch {
    return null;
  }
}
