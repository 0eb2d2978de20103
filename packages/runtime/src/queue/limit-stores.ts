import { readFileSync } from "node:fs";
import type { SqlDatabase } from "../core/sql-port.js";
import type { LimitStore } from "../core/limit-store.js";

const sql = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const SQL = {
  // The PostgreSQL queue's own statement: one declaration of the table's rows for both.
  setLimits: sql("../backends/postgres/sql/set-limits.sql"),
  lock: sql("./sql/lock-task-limit.sql"),
  take: sql("./sql/take-limit-slot.sql"),
  extend: "UPDATE jfast_task_slots SET until = now() + $3::double precision * interval '1 millisecond' WHERE queue = $1 AND job_id = ANY($2::text[])",
  free: "DELETE FROM jfast_task_slots WHERE queue = $1 AND job_id = ANY($2::text[])",
  usage: `SELECT (SELECT count(*) FROM jfast_task_slots WHERE queue = $1 AND task = $2 AND until >= now()) AS running,
    coalesce((SELECT count(*) FROM jfast_task_limits l, unnest(l.starts) AS t(at)
              WHERE l.queue = $1 AND l.task = $2 AND t.at > now() - l.rate_per_ms * interval '1 millisecond'), 0) AS started`,
} as const;

/** When a job over its task's concurrency is offered again: a slot frees when a job ends, which no one announces. */
const CONCURRENCY_RETRY_MS = 500;

/** jfast_task_limits and jfast_task_slots (migration 0020), shared by every process of the service. */
export function createSqlLimitStore(params: { db: SqlDatabase; queue: string }): LimitStore {
  const { db, queue } = params;
  return {
    kind: "sql",
    async setLimits({ limits }) {
      const of = [...limits.values()];
      await db.query(SQL.setLimits, [queue, [...limits.keys()], of.map((l) => l.concurrency), of.map((l) => l.rateLimit?.max ?? null), of.map((l) => l.rateLimit?.perMs ?? null), of.map((l) => l.perKey === true), of.map((l) => l.fair !== undefined), of.map(() => null), of.map(() => null), of.map(() => null), of.map(() => null)]);
    },
    take({ task, jobId, leaseMs }) {
      return db.transaction(async (tx) => {
        const locked = await tx.query(SQL.lock, [queue, task]);
        if (locked.length === 0) return { granted: true as const };
        const [row] = await tx.query<{ granted: boolean; retry_in_ms: number | string | null }>(SQL.take, [queue, task, jobId, leaseMs]);
        if (row?.granted !== false) return { granted: true as const };
        const retryInMs = row.retry_in_ms === null ? CONCURRENCY_RETRY_MS : Math.max(1, Math.ceil(Number(row.retry_in_ms)));
        return { granted: false as const, retryInMs };
      });
    },
    async extend({ jobIds, leaseMs }) {
      if (jobIds.length > 0) await db.query(SQL.extend, [queue, jobIds, leaseMs]);
    },
    async free({ jobIds }) {
      if (jobIds.length > 0) await db.query(SQL.free, [queue, jobIds]);
    },
    async usage({ task }) {
      const [row] = await db.query<{ running: string | number; started: string | number }>(SQL.usage, [queue, task]);
      return { running: Number(row?.running ?? 0), startedInWindow: Number(row?.started ?? 0) };
    },
  };
}
