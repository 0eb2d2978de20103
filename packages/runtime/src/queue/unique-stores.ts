import { readFileSync } from "node:fs";
import type { SqlExecutor } from "../core/sql-port.js";
import type { UniqueStore } from "../core/unique-store.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = { take: sql("take-unique-keys"), confirm: sql("confirm-unique-keys"), release: sql("release-unique-keys") } as const;

/** jfast_unique_keys (migration 0019), shared by every process of the service. */
export function createSqlUniqueStore(params: { db: SqlExecutor; queue: string }): UniqueStore {
  const { db, queue } = params;
  return {
    kind: "sql",
    async take({ keys, jobIds, holdMs, states }) {
      const rows = await db.query<{ key: string; job_id: string }>(SQL.take, [
        queue,
        keys,
        jobIds,
        holdMs,
        states.map((s) => (s === null ? null : `{${s.join(",")}}`)),
      ]);
      return new Map(rows.map((row) => [row.key, row.job_id]));
    },
    async confirm({ keys, jobIds }) {
      if (keys.length > 0) await db.query(SQL.confirm, [queue, keys, jobIds]);
    },
    async release({ jobIds, state }) {
      if (jobIds.length > 0) await db.query(SQL.release, [queue, jobIds, state]);
    },
  };
}
