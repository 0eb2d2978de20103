import { hasDebounce, scopedDebounceKey } from "../../core/debounce.js";
import type { Job } from "../../core/job.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import type { PgQueue } from "./context.js";
import { SQL } from "./load-sql.js";

/** Batches being written by writeDebounced (its inner enqueues must not come back here). */
const writing = new WeakSet<readonly Job[]>();

export function debouncePending(jobs: readonly Job[]): boolean {
  return !writing.has(jobs) && hasDebounce(jobs);
}

/**
 * A batch with a debounced job (docs/flow-control.md#debounce), in one transaction (the caller's, or one opened here).
 * Each key is taken with a transaction-scoped advisory lock, keys in sorted order so two batches never wait on each
 * other: concurrent enqueues of one key, in any process, run one after the other, and each sees what the one before
 * committed. Under the lock, debounce-fold.sql folds the job into the key's waiting job (a duplicate of it), or the
 * job is inserted and becomes the key's waiting job (debounce-register.sql). The other jobs of the batch are written
 * as usual.
 */
export function writeDebounced(q: PgQueue, executor: SqlExecutor, jobs: Job[], enqueue: (tx: SqlExecutor, jobs: Job[]) => Promise<EnqueueResult>): Promise<EnqueueResult> {
  const write = async (tx: SqlExecutor): Promise<EnqueueResult> => {
    const inserted: string[] = [];
    const duplicates = new Map<string, string>();
    const plain = jobs.filter((job) => job.debounce === null);
    const keyed = jobs.filter((job) => job.debounce !== null).map((job) => ({ job, key: scopedDebounceKey(job) }));
    for (const key of [...new Set(keyed.map((k) => k.key))].sort()) {
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`jfast.debounce:${q.queue}:${key}`]);
    }
    for (const { job, key } of keyed) {
      const debounce = job.debounce!;
      const [folded] = await tx.query<{ id: string }>(SQL.debounceFold, [q.queue, key, JSON.stringify(job.payload), debounce.delayMs, debounce.maxWaitMs]);
      if (folded) {
        if (folded.id !== job.id) duplicates.set(job.id, folded.id);
        continue;
      }
      const one = [job];
      writing.add(one);
      const result = await enqueue(tx, one);
      inserted.push(...result.inserted);
      if (result.inserted.includes(job.id)) await tx.query(SQL.debounceRegister, [q.queue, key, job.id]);
    }
    if (plain.length > 0) {
      writing.add(plain);
      const result = await enqueue(tx, plain);
      inserted.push(...result.inserted);
      for (const [id, holder] of result.duplicates ?? []) duplicates.set(id, holder);
    }
    const order = new Map(jobs.map((job, i) => [job.id, i]));
    inserted.sort((a, b) => order.get(a)! - order.get(b)!);
    return duplicates.size > 0 ? { inserted, duplicates } : { inserted };
  };
  if (executor !== q.db) return write(executor);
  return q.run("enqueue", () => q.db.transaction(write));
}
