import { readFileSync } from "node:fs";
import { mergeInto, type Histogram } from "../core/latency-histogram.js";
import type { SqlExecutor } from "../core/sql-port.js";
import {
  HOUR_MS,
  MINUTE_RETENTION_MS,
  minutesAndHours,
  StatsSpan,
  THROUGHPUT_RETENTION_MS,
  type StatsRow,
  type ThroughputStore,
} from "../core/throughput.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = { add: sql("add-stats"), read: sql("read-throughput"), series: sql("read-stats"), prune: sql("prune-stats") } as const;
const SPAN_MINUTES = { [StatsSpan.minute]: 1, [StatsSpan.hour]: 60 } as const;

type Count = string | number;

/** jfast_stats (migrations 0011, 0029), shared by every process, kept across restarts. */
export function createSqlThroughputStore(params: { db: SqlExecutor; queue: string }): ThroughputStore {
  const { db, queue } = params;
  return {
    kind: "sql",
    async add(rows) {
      if (rows.length === 0) return;
      const all = minutesAndHours(rows);
      await db.query(SQL.add, [
        queue,
        all.map((r) => SPAN_MINUTES[r.span]),
        all.map((r) => new Date(r.at).toISOString()),
        all.map((r) => r.task),
        all.map((r) => r.processed),
        all.map((r) => r.failed),
        all.map((r) => r.dead),
        all.map((r) => JSON.stringify(r.run)),
        all.map((r) => JSON.stringify(r.wait)),
      ]);
    },
    async read({ from, task }) {
      const rows = await db.query<{ minute: Date | string; processed: Count; failed: Count; dead: Count }>(SQL.read, [queue, new Date(from).toISOString(), task ?? null]);
      return rows.map((r) => ({ minute: new Date(r.minute).getTime(), processed: Number(r.processed), failed: Number(r.failed), dead: Number(r.dead) }));
    },
    async series({ from, span, task }) {
      const rows = await db.query<{ at: Date | string; task: string; processed: Count; failed: Count; dead: Count; run_ms: unknown; wait_ms: unknown }>(SQL.series, [
        queue,
        SPAN_MINUTES[span],
        new Date(from).toISOString(),
        task ?? null,
      ]);
      return rows.map((r) => ({
        at: new Date(r.at).getTime(),
        task: r.task,
        processed: Number(r.processed),
        failed: Number(r.failed),
        dead: Number(r.dead),
        run: histogramOf(r.run_ms),
        wait: histogramOf(r.wait_ms),
      }));
    },
    async prune({ now }) {
      await db.query(SQL.prune, [queue, new Date(now - MINUTE_RETENTION_MS).toISOString(), new Date(now - THROUGHPUT_RETENTION_MS).toISOString()]);
    },
  };
}

/** A jsonb column as the driver gives it (parsed, or text on some paths), with numeric counts. */
function histogramOf(value: unknown): Histogram {
  const parsed = (typeof value === "string" ? JSON.parse(value) : (value ?? {})) as Record<string, Count>;
  const out: Histogram = {};
  for (const [bucket, count] of Object.entries(parsed)) out[Number(bucket)] = Number(count);
  return out;
}

/** One process's counts, for a service without a database or Redis; gone on restart. */
export function createMemoryThroughputStore(): ThroughputStore {
  /** Keyed by span, then `<at>|<task>`. */
  const spans = { [StatsSpan.minute]: new Map<string, StatsRow>(), [StatsSpan.hour]: new Map<string, StatsRow>() };
  const stored = (span: StatsSpan, from: number, task: string | undefined) =>
    [...spans[span].values()].filter((r) => r.at >= from && (task === undefined || r.task === task)).sort((a, b) => a.at - b.at || a.task.localeCompare(b.task));
  return {
    kind: "memory",
    async add(rows) {
      for (const row of minutesAndHours(rows)) {
        const key = `${row.at}|${row.task}`;
        const existing = spans[row.span].get(key);
        if (!existing) {
          spans[row.span].set(key, { at: row.at, task: row.task, processed: row.processed, failed: row.failed, dead: row.dead, run: { ...row.run }, wait: { ...row.wait } });
          continue;
        }
        existing.processed += row.processed;
        existing.failed += row.failed;
        existing.dead += row.dead;
        mergeInto(existing.run, row.run);
        mergeInto(existing.wait, row.wait);
      }
    },
    async read({ from, task }) {
      const byMinute = new Map<number, { minute: number; processed: number; failed: number; dead: number }>();
      for (const row of stored(StatsSpan.minute, from, task)) {
        const sum = byMinute.get(row.at) ?? { minute: row.at, processed: 0, failed: 0, dead: 0 };
        byMinute.set(row.at, sum);
        sum.processed += row.processed;
        sum.failed += row.failed;
        sum.dead += row.dead;
      }
      return [...byMinute.values()];
    },
    async series({ from, span, task }) {
      return stored(span, from, task).map((r) => ({ ...r, run: { ...r.run }, wait: { ...r.wait } }));
    },
    async prune({ now }) {
      for (const [key, row] of spans[StatsSpan.minute]) if (row.at < now - MINUTE_RETENTION_MS) spans[StatsSpan.minute].delete(key);
      for (const [key, row] of spans[StatsSpan.hour]) if (row.at < now - THROUGHPUT_RETENTION_MS - HOUR_MS) spans[StatsSpan.hour].delete(key);
    },
  };
}
