import type { RedisClient } from "./connection.js";
import { MINUTE_MS, THROUGHPUT_RETENTION_MS, type ThroughputStore } from "../../core/throughput.js";
import type { QueueKeys } from "./keys.js";

const FIELD = { processed: "p", failed: "f", dead: "d" } as const;
/** A minute's hash outlives the retention by an hour, so a read at the edge never finds half of it. */
const TTL_MS = THROUGHPUT_RETENTION_MS + 60 * 60 * 1000;

/**
 * Throughput counts of a Redis queue: one hash per minute (keys.ts), HINCRBY per task and kind, expiring after
 * the retention period, so nothing needs pruning. A read fetches one hash per minute in one pipeline.
 */
export function createRedisThroughputStore(params: {
  keys: QueueKeys;
  guard: <T>(operation: string, fn: (redis: RedisClient) => Promise<T>) => Promise<T>;
}): ThroughputStore {
  const { keys, guard } = params;
  return {
    kind: "redis",
    async add(rows) {
      if (rows.length === 0) return;
      await guard("record throughput", async (redis) => {
        const pipeline = redis.pipeline();
        const touched = new Set<number>();
        for (const row of rows) {
          const key = keys.throughput(row.minute);
          for (const kind of ["processed", "failed", "dead"] as const) {
            if (row[kind] > 0) pipeline.hincrby(key, `${FIELD[kind]}:${row.task}`, row[kind]);
          }
          touched.add(row.minute);
        }
        for (const minute of touched) pipeline.pexpire(keys.throughput(minute), TTL_MS);
        const results = await pipeline.exec();
        const failed = results?.find(([error]) => error);
        if (failed) throw failed[0];
      });
    },
    async read({ from, task }) {
      const now = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
      const minutes: number[] = [];
      for (let minute = Math.ceil(from / MINUTE_MS) * MINUTE_MS; minute <= now; minute += MINUTE_MS) minutes.push(minute);
      if (minutes.length === 0) return [];
      const hashes = await guard("read throughput", async (redis) => {
        const pipeline = redis.pipeline();
        for (const minute of minutes) pipeline.hgetall(keys.throughput(minute));
        return ((await pipeline.exec()) ?? []).map(([error, value]) => {
          if (error) throw error;
          return value as Record<string, string>;
        });
      });
      const points: Array<{ minute: number; processed: number; failed: number; dead: number }> = [];
      hashes.forEach((hash, i) => {
        const fields = Object.entries(hash);
        if (fields.length === 0) return;
        const point = { minute: minutes[i]!, processed: 0, failed: 0, dead: 0 };
        for (const [field, value] of fields) {
          const colon = field.indexOf(":");
          if (task !== undefined && field.slice(colon + 1) !== task) continue;
          const kind = field.slice(0, colon);
          if (kind === FIELD.processed) point.processed += Number(value);
          else if (kind === FIELD.failed) point.failed += Number(value);
          else if (kind === FIELD.dead) point.dead += Number(value);
        }
        points.push(point);
      });
      return points;
    },
    async prune() {},
  };
}
