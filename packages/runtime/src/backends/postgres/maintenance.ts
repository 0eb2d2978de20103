import type { LimitMap, LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { PgQueue } from "./context.js";
import { SQL } from "./load-sql.js";

export async function prune(q: PgQueue, { state, select, limit }: PruneParams): Promise<number> {
  const [sql, params] =
    state === RetainedState.dead
      ? "before" in select
        ? [SQL.pruneDead, [q.queue, select.before.toISOString(), limit]]
        : [SQL.pruneDeadCount, [q.queue, select.keepNewest, limit]]
      : "before" in select
        ? [SQL.pruneFinished, [q.queue, state, select.before.toISOString(), limit]]
        : [SQL.pruneFinishedCount, [q.queue, state, select.keepNewest, limit]];
  const [row] = await q.run("prune", () => q.db.query<{ deleted: number | string }>(sql, params));
  return Number(row?.deleted ?? 0);
}

/**
 * Per-key state of keys with no open job (docs/flow-control.md#pruning-per-key-state), up to `limit` rows of each
 * kind: fair keys with no open job (locked, then dropped with a fresh snapshot, their last turn kept), turn
 * counts, and rate windows that can hold nothing back any more. Returns how many rows went.
 */
export async function pruneKeys(q: PgQueue, { limit }: { limit: number }): Promise<number> {
  const fair = await q.run("pruneKeys", () =>
    q.db.transaction(async (tx) => {
      const rows = await tx.query<{ task: string; limit_key: string }>(SQL.pruneFairKeysLock, [q.queue, limit]);
      if (rows.length > 0) await tx.query(SQL.fairKeysDrop, [q.queue, rows.map((r) => r.task), rows.map((r) => r.limit_key)]);
      return rows.length;
    }),
  );
  // After the fair keys, whose turns fair-keys-drop.sql just kept in jfast_key_turns.
  const [turns] = await q.run("pruneKeys", () => q.db.query<{ deleted: number | string }>(SQL.pruneKeyTurns, [q.queue, limit]));
  const [starts] = await q.run("pruneKeys", () => q.db.query<{ deleted: number | string }>(SQL.pruneKeyStarts, [q.queue, limit]));
  return fair + Number(turns?.deleted ?? 0) + Number(starts?.deleted ?? 0);
}

export async function claimPruner(q: PgQueue, { owner, ttlMs }: { owner: string; ttlMs: number }): Promise<boolean> {
  const rows = await q.run("claimPruner", () => q.db.query(SQL.claimLease, [`prune:${q.queue}`, owner, ttlMs]));
  return rows.length === 1;
}

export async function releasePruner(q: PgQueue, { owner }: { owner: string }): Promise<void> {
  await q.run("releasePruner", () => q.db.query(SQL.releaseLease, [`prune:${q.queue}`, owner]));
}

export async function setLimits(q: PgQueue, { limits }: { limits: LimitMap }): Promise<void> {
  const tasks = [...limits.keys()];
  const of = [...limits.values()];
  await q.run("setLimits", () =>
    q.db.query(SQL.setLimits, [
      q.queue,
      tasks,
      of.map((l) => l.concurrency),
      of.map((l) => l.rateLimit?.max ?? null),
      of.map((l) => l.rateLimit?.perMs ?? null),
      of.map((l) => l.perKey === true),
      of.map((l) => l.fair !== undefined),
      of.map((l) => (l.fair && Object.keys(l.fair.weights).length > 0 ? JSON.stringify(l.fair.weights) : null)),
      of.map((l) => l.keyRate?.max ?? null),
      of.map((l) => l.keyRate?.perMs ?? null),
      of.map((l) => l.ordered?.onDead ?? null),
    ]),
  );
  q.limited.declare(limits);
  if (q.limited.keyed.length > 0) await q.run("setLimits", () => q.db.query(SQL.setLimitKeysMissing, [q.queue, q.limited.keyed]));
  // A fair task's keys with open jobs, stored while it had no fairness or by a process that did not know it.
  if (q.limited.fairOnly.length > 0) await q.run("setLimits", () => q.db.query(SQL.fairKeysMissing, [q.queue, q.limited.fairOnly]));
}

export async function limitUsage(q: PgQueue, { task }: { task: string }): Promise<LimitUsage> {
  const [row] = await q.run("limitUsage", () => q.db.query<{ running: string | number; started: string | number }>(SQL.limitUsage, [q.queue, task]));
  return { running: Number(row?.running ?? 0), startedInWindow: Number(row?.started ?? 0) };
}
