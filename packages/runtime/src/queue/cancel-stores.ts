import { readFileSync } from "node:fs";
import type { CancelStore } from "../core/cancel-store.js";
import type { SqlExecutor } from "../core/sql-port.js";

const sql = (name: string) => readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
const SQL = { record: sql("record-cancel"), since: sql("cancelled-since") } as const;

/** jfast_cancelled_jobs (migration 0017), shared by every process of the service. */
export function createSqlCancelStore(params: { db: SqlExecutor; queue: string }): CancelStore {
  const { db, queue } = params;
  return {
    kind: "sql",
    async record({ id }) {
      return (await db.query(SQL.record, [queue, id])).length > 0;
    },
    async since({ after, limit }) {
      const rows = await db.query<{ seq: string | number; id: string }>(SQL.since, [queue, after ?? "0", limit]);
      return { ids: rows.map((r) => r.id), cursor: rows.length > 0 ? String(rows.at(-1)!.seq) : after };
    },
  };
}
