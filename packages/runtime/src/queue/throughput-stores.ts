import { readFileSync } from "node:fs";
import type { SqlExecutor } from "../core/sql-port.js";
import type { ThroughputCounts, ThroughputRow, ThroughputStore } from "../core/throughput.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = { add: sql("add-throughput"), read: sql("read-throughput"), prune: sql("prune-throughput") } as const;

/** jfast_throughput (migration 0011), shared by every process, kept across restarts. */
export function createSqlThroughputStore(params: { db: SqlExecutor; queue: string }): ThroughputStore {
  const { db, queue } = params;
  return {
    kind: "sql",
    async add(rows) {
      if (rows.length === 0) return;
      await db.query(SQL.add, [
        queue,
        rows.map((r) => new Date(r.minute).toISOString()),
        rows.map((r) => r.task),
        rows.map((r) => r.processed),
        rows.map((r) => r.failed),
        rows.map((r) => r.dead),
      ]);
    },
    async read({ from, task }) {
      const rows = await db.query<{ minute: Date | string; processed: string | number; failed: string | number; dead: string | number }>(SQL.read, [
        queue,
        new Date(from).toISOString(),
        task ?? null,
      ]);
      return rows.map((r) => ({ minute: new Date(r.minute).getTime(), processed: Number(r.processed), failed: Number(r.failed), dead: Number(r.dead) }));
    },
    async prune({ before }) {
      await db.query(SQL.prune, [queue, new Date(before).toISOString()]);
    },
  };
}

/** One process's counts, for a service without a database or Redis; gone on restart. */
export function createMemoryThroughputStore(): ThroughputStore {
  const minutes = new Map<number, Map<string, ThroughputCounts>>();
  return {
    kind: "memory",
    async add(rows: ThroughputRow[]) {
      for (const row of rows) {
        const tasks = minutes.get(row.minute) ?? new Map<string, ThroughputCounts>();
        minutes.set(row.minute, tasks);
        const counts = tasks.get(row.task) ?? { processed: 0, failed: 0, dead: 0 };
        tasks.set(row.task, { processed: counts.processed + row.processed, failed: counts.failed + row.failed, dead: counts.dead + row.dead });
      }
    },
    async read({ from, task }) {
      return [...minutes.entries()]
        .filter(([minute]) => minute >= from)
        .sort(([a], [b]) => a - b)
        .map(([minute, tasks]) => {
          const sum = { minute, processed: 0, failed: 0, dead: 0 };
          for (const [name, counts] of tasks) {
            if (task !== undefined && name !== task) continue;
            sum.processed += counts.processed;
            sum.failed += counts.failed;
            sum.dead += counts.dead;
          }
          return sum;
        });
    },
    async prune({ before }) {
      for (const minute of minutes.keys()) if (minute < before) minutes.delete(minute);
    },
  };
}
