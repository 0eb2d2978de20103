import type { SqlDatabase } from "../core/sql-port.js";
import type { Logger } from "../observability/logger.js";
import { loadSql } from "./load-sql.js";

const PRUNE_INBOX = loadSql("prune-inbox");
const BATCH = 5000;
const HOUR_MS = 3_600_000;

/**
 * Deletes inbox keys older than `[plugin.database] inbox_retention_days`. Every process runs it: two
 * pruners deleting the same old rows only wait on each other, and no process is special. It runs at
 * start and then every retention/4 (between 1 s and 1 h), so keys never outlive the retention by much.
 * A key pruned too early would let a very late redelivery run again, so keep the retention well above
 * the longest time a job can spend in the queue (its retries included).
 */
export function startInboxPruner(params: { db: SqlDatabase; retentionDays: number; logger: Logger }): {
  prune(): Promise<number>;
  /** Stops the timer and waits for a prune in flight, so the database can close under it. */
  stop(): Promise<void>;
} {
  const retentionSeconds = params.retentionDays * 86_400;
  const intervalMs = Math.min(HOUR_MS, Math.max(1000, Math.round((retentionSeconds * 1000) / 4)));
  /** Prunes run one after another; an on-demand prune always starts after the one in flight. */
  let chain: Promise<unknown> = Promise.resolve();
  let ticking = false;

  async function pruneAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const [row] = await params.db.query<{ deleted: number }>(PRUNE_INBOX, [retentionSeconds, BATCH]);
      const deleted = Number(row?.deleted ?? 0);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  }

  function prune(): Promise<number> {
    const run = chain.catch(() => undefined).then(pruneAll);
    chain = run;
    return run;
  }

  const tick = () => {
    if (ticking) return;
    ticking = true;
    prune()
      .then(
        (deleted) => deleted > 0 && params.logger.debug("pruned the inbox", { deleted }),
        (error) => params.logger.warn("inbox pruning failed; it runs again later", { error }),
      )
      .finally(() => (ticking = false));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    prune,
    async stop() {
      clearInterval(timer);
      await chain.catch(() => undefined);
    },
  };
}
