import type { JobJSON } from "../core/job.js";
import type { SqlExecutor } from "../core/sql-port.js";
import { SQL } from "./load-sql.js";

const PAGE_SIZE = 200;

/**
 * `jfast keys rotate` on jfast_outbox: each job row waiting for the relay, or dead, whose body `rewrite` changes is
 * written back if the relay did not take it meanwhile. Returns the rows rewritten and those left, with why.
 */
export async function rewriteOutboxJobs(params: {
  db: SqlExecutor;
  rewrite(body: JobJSON): JobJSON | null;
}): Promise<{ rewritten: number; skipped: Array<{ id: string; reason: string }> }> {
  const skipped: Array<{ id: string; reason: string }> = [];
  let rewritten = 0;
  let after = 0;
  for (;;) {
    const rows = await params.db.query<{ id: string; seq: string | number; body: string }>(SQL.sealedPage, [after, PAGE_SIZE]);
    for (const row of rows) {
      let next: JobJSON | null;
      try {
        next = params.rewrite(JSON.parse(row.body) as JobJSON);
      } catch (error) {
        skipped.push({ id: row.id, reason: (error instanceof Error ? error.message : String(error)).split("\n")[0]! });
        continue;
      }
      if (!next) continue;
      const written = await params.db.query(SQL.rewriteBody, [row.id, row.body, JSON.stringify(next)]);
      if (written.length === 1) rewritten++;
      else skipped.push({ id: row.id, reason: "relayed or changed while it was rewritten" });
    }
    if (rows.length < PAGE_SIZE) return { rewritten, skipped };
    after = Number(rows.at(-1)!.seq);
  }
}
