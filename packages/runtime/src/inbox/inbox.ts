import type { SqlExecutor } from "../core/sql-port.js";

/**
 * Claims `key` for `consumer` in jfast_inbox inside the caller's transaction. True: first time, do the work.
 * False: a committed transaction already did it, skip. A rolled-back transaction takes its claim with it,
 * so the retry claims again and runs. Relies on the primary key (consumer, key).
 */
export async function claimOnce(session: SqlExecutor, params: { consumer: string; key: string }): Promise<boolean> {
  const rows = await session.query(
    `INSERT INTO jfast_inbox (consumer, key) VALUES ($1, $2) ON CONFLICT (consumer, key) DO NOTHING RETURNING 1 AS claimed`,
    [params.consumer, params.key],
  );
  return rows.length === 1;
}
