import type { RedisClient } from "./connection.js";
import type { Histogram } from "../../core/latency-histogram.js";
import {
  HOUR_MS,
  MINUTE_RETENTION_MS,
  minutesAndHours,
  spanMs,
  StatsSpan,
  THROUGHPUT_RETENTION_MS,
  type StatsRow,
  type ThroughputStore,
} from "../../core/throughput.js";
import type { QueueKeys } from "./keys.js";

const FIELD = { processed: "p", failed: "f", dead: "d", run: "r", wait: "w" } as const;
/** A hash outlives its retention by an hour, so a read at the edge never finds half of it. */
const TTL_MS = { [StatsSpan.minute]: MINUTE_RETENTION_MS + HOUR_MS, [StatsSpan.hour]: THROUGHPUT_RETENTION_MS + HOUR_MS } as const;

/**
 * Throughput counts and run/wait histograms of a Redis queue: one hash per minute and one per hour (keys.ts),
 * HINCRBY per task, kind and bucket, so processes' flushes add up; every key carries the queue's hash tag (one
 * Cluster slot) and expires after its retention, so nothing needs pruning. A flush is one pipeline; a read
 * fetches one hash per minute or hour in one pipeline.
 */
export function createRedisThroughputStore(params: {
  keys: QueueKeys;
  guard: <T>(operation: string, fn: (redis: RedisClient) => Promise<T>) => Promise<T>;
}): ThroughputStore {
  const { keys, guard } = params;
  const keyOf = (span: StatsSpan, at: number) => (span === StatsSpan.hour ? keys.throughputHour(at) : keys.throughput(at));

  async function hashes(span: StatsSpan, from: number): Promise<Array<{ at: number; hash: Record<string, string> }>> {
    const step = spanMs(span);
    const now = Math.floor(Date.now() / step) * step;
    const ats: number[] = [];
    for (let at = Math.ceil(from / step) * step; at <= now; at += step) ats.push(at);
    if (ats.length === 0) return [];
    const values = await guard("read throughput", async (redis) => {
      const pipeline = redis.pipeline();
      for (const at of ats) pipeline.hgetall(keyOf(span, at));
      return ((await pipeline.exec()) ?? []).map(([error, value]) => {
        if (error) throw error;
        return value as Record<string, string>;
      });
    });
    return values.map((hash, i) => ({ at: ats[i]!, hash })).filter((h) => Object.keys(h.hash).length > 0);
  }

  return {
    kind: "redis",
    async add(rows) {
      if (rows.length === 0) return;
      await guard("record throughput", async (redis) => {
        const pipeline = redis.pipeline();
        const touched = new Map<string, StatsSpan>();
        for (const row of minutesAndHours(rows)) {
          const key = keyOf(row.span, row.at);
          for (const kind of ["processed", "failed", "dead"] as const) {
            if (row[kind] > 0) pipeline.hincrby(key, `${FIELD[kind]}:${row.task}`, row[kind]);
          }
          for (const kind of ["run", "wait"] as const) {
            for (const [bucket, count] of Object.entries(row[kind])) pipeline.hincrby(key, `${FIELD[kind]}${bucket}:${row.task}`, count);
          }
          touched.set(key, row.span);
        }
        for (const [key, span] of touched) pipeline.pexpire(key, TTL_MS[span]);
        const results = await pipeline.exec();
        const failed = results?.find(([error]) => error);
        if (failed) throw failed[0];
      });
    },
    async read({ from, task }) {
      return (await hashes(StatsSpan.minute, from)).map(({ at, hash }) => {
        const point = { minute: at, processed: 0, failed: 0, dead: 0 };
        for (const row of rowsOf(at, hash, task)) {
          point.processed += row.processed;
          point.failed += row.failed;
          point.dead += row.dead;
        }
        return point;
      });
    },
    async series({ from, span, task }) {
      return (await hashes(span, from)).flatMap(({ at, hash }) => rowsOf(at, hash, task));
    },
    async prune() {},
  };
}

/** One hash's fields as a row per task (of `task` only when given), sorted by task. */
function rowsOf(at: number, hash: Record<string, string>, task: string | undefined): StatsRow[] {
  const byTask = new Map<string, StatsRow>();
  for (const [field, value] of Object.entries(hash)) {
    const colon = field.indexOf(":");
    const name = field.slice(colon + 1);
    if (task !== undefined && name !== task) continue;
    let row = byTask.get(name);
    if (!row) {
      row = { at, task: name, processed: 0, failed: 0, dead: 0, run: {}, wait: {} };
      byTask.set(name, row);
    }
    const kind = field.slice(0, colon);
    const n = Number(value);
    if (kind === FIELD.processed) row.processed += n;
    else if (kind === FIELD.failed) row.failed += n;
    else if (kind === FIELD.dead) row.dead += n;
    else if (kind[0] === FIELD.run) add(row.run, kind, n);
    else if (kind[0] === FIELD.wait) add(row.wait, kind, n);
  }
  return [...byTask.values()].sort((a, b) => a.task.localeCompare(b.task));
}

function add(into: Histogram, kind: string, n: number): void {
  const bucket = Number(kind.slice(1));
  into[bucket] = (into[bucket] ?? 0) + n;
}
