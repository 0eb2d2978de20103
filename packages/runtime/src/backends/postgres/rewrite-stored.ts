import type { AttemptError } from "../../core/job.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { rewriteParts, type StoredParts, type StoredRewriteResult } from "../../core/stored-rewrite.js";
import { loadSql } from "./load-sql.js";

const PAGE = loadSql("rewritable-page");
const REWRITE = loadSql("rewrite-job");
const PAGE_SIZE = 200;

/** StoredRewrite on jfast_jobs: pages of sealed rows in id order, each written back if it did not change. */
export async function rewriteStoredJobs(params: {
  db: SqlExecutor;
  queue: string;
  rewrite(parts: StoredParts): StoredParts | null;
}): Promise<StoredRewriteResult> {
  const result: StoredRewriteResult = { waiting: 0, dead: 0, skipped: [] };
  let after = "";
  for (;;) {
    const rows = await params.db.query<{ id: string; state: string; payload: string; errors: string }>(PAGE, [params.queue, after, PAGE_SIZE]);
    for (const row of rows) {
      const parts = { payload: JSON.parse(row.payload) as unknown, errors: JSON.parse(row.errors) as AttemptError[] };
      const next = rewriteParts(row.id, parts, params.rewrite, result.skipped);
      if (!next) continue;
      const written = await params.db.query(REWRITE, [params.queue, row.id, row.payload, row.errors, JSON.stringify(next.payload), JSON.stringify(next.errors)]);
      if (written.length === 0) result.skipped.push({ id: row.id, reason: "claimed or changed while it was rewritten: left under its key" });
      else if (row.state === "dead") result.dead++;
      else result.waiting! += 1;
    }
    if (rows.length < PAGE_SIZE) return result;
    after = rows.at(-1)!.id;
  }
}
