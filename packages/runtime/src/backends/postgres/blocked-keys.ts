import type { BlockedKey } from "../../core/backend/admin.js";
import type { PgQueue } from "./context.js";
import { SQL } from "./load-sql.js";

/** list-blocked-keys.sql (docs/flow-control.md#order-per-key). */
export async function blockedKeys(q: PgQueue, { limit }: { limit: number }): Promise<BlockedKey[]> {
  const rows = await q.run("blockedKeys", () =>
    q.db.query<{ task: string; key: string; job_id: string; died_at: number | string; waiting: number | string }>(SQL.listBlockedKeys, [q.queue, limit]),
  );
  return rows.map((r) => ({ task: r.task, key: r.key, jobId: r.job_id, diedAt: new Date(Number(r.died_at)).toISOString(), waiting: Number(r.waiting) }));
}

/** skip-blocked-key.sql; workers are woken, the key's next job being due. */
export async function skipBlockedKey(q: PgQueue, { task, key }: { task: string; key: string }): Promise<{ skipped: string[] }> {
  const rows = await q.run("skipBlockedKey", () => q.db.query<{ id: string }>(SQL.skipBlockedKey, [q.queue, task, key]));
  return { skipped: rows.map((r) => r.id) };
}
