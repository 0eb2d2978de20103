import type { TaskRegistry } from "../core/registry.js";
import type { SqlDatabase } from "../core/sql-port.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { SCAN_BUDGET, scanDead, type DeadFilter } from "./dead-scan.js";
import type { Redaction } from "./redact.js";

/** What a replay of the chosen dead letters would do, before it runs (deadLetters.replayPreview). */
export interface ReplayPreview {
  /** Dead letters the replay would requeue; `totalExact: false` when counting stopped at the scan budget. */
  total: number;
  totalExact: boolean;
  /**
   * Of those, the ones whose task is idempotent (`idempotentOn`) and whose key the inbox already holds: their
   * effect committed before they died (a failure after the commit), so the requeued job would be skipped.
   */
  skippedByInbox: number;
  /** Idempotent tasks among the chosen dead letters, whose keys were looked up. */
  idempotentTasks: string[];
  /** Dead letters of idempotent tasks whose key could not be computed from their payload. */
  unreadable: number;
  /** Why the inbox was not read (no database in this service), else null. */
  inboxUnavailable: string | null;
}

/** Keys looked up in the inbox per query. */
const KEYS_PER_QUERY = 1000;

/**
 * Counts the dead letters a replay with `filter` would requeue, and how many of them the inbox would skip: the
 * same key the worker computes (`idempotentOn(payload)`, consumer = the task's name), looked up in jfast_inbox.
 */
export async function previewReplay(params: {
  queue: QueueProvider;
  registry: TaskRegistry;
  database: SqlDatabase | null;
  filter: DeadFilter;
  redaction: Redaction;
}): Promise<ReplayPreview> {
  const scan = await scanDead(params.queue.backend, { filter: params.filter, offset: 0, want: SCAN_BUDGET, redaction: params.redaction });
  const keys = new Map<string, string[]>();
  let unreadable = 0;
  for (const dead of scan.rows) {
    const definition = params.registry.get(dead.job.task);
    const keyOf = definition?.options.idempotentOn;
    if (!keyOf) continue;
    try {
      const key = String(keyOf(dead.job.payload as never));
      keys.set(dead.job.task, [...(keys.get(dead.job.task) ?? []), key]);
    } catch {
      unreadable++;
    }
  }
  const preview: ReplayPreview = {
    total: scan.rows.length,
    totalExact: !scan.budgetReached && scan.nextOffset === null,
    skippedByInbox: 0,
    idempotentTasks: [...keys.keys()].sort(),
    unreadable,
    inboxUnavailable: null,
  };
  if (keys.size === 0) return preview;
  if (!params.database) return { ...preview, inboxUnavailable: "this service has no database, so no inbox to read" };
  for (const [consumer, all] of keys) {
    for (let i = 0; i < all.length; i += KEYS_PER_QUERY) {
      const slice = all.slice(i, i + KEYS_PER_QUERY);
      // jfast_inbox_pkey (consumer, key): one index probe per key.
      const rows = await params.database.query<{ key: string }>("SELECT key FROM jfast_inbox WHERE consumer = $1 AND key = ANY($2::text[])", [consumer, slice]);
      const committed = new Set(rows.map((r) => r.key));
      preview.skippedByInbox += slice.filter((key) => committed.has(key)).length;
    }
  }
  return preview;
}
