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
    ]),
  );
  q.limited.declare(limits);
}

export async function limitUsage(q: PgQueue, { task }: { task: string }): Promise<LimitUsage> {
  const [row] = await q.run("limitUsage", () => q.db.query<{ running: string | number; started: string | number }>(SQL.limitUsage, [q.queue, task]));
  return { running: Number(row?.running ?? 0), startedInWindow: Number(row?.started ?? 0) };
}
