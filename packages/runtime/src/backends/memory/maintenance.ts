import { StartWindow, type LimitMap, type LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { Entry, MemoryStore } from "./store.js";

export function prune(store: MemoryStore, { state, select, limit }: PruneParams): number {
  const at = (e: Entry) => (state === RetainedState.dead ? (e.diedAt ?? 0) : (e.finishedAt ?? 0));
  // Oldest first, ties by enqueue order, as the other backends read their indexes.
  const finished = [...store.entries.entries()].filter(([, e]) => e.state === state).sort(([, a], [, b]) => at(a) - at(b) || a.seq - b.seq);
  const doomed =
    "before" in select ? finished.filter(([, e]) => at(e) < select.before.getTime()) : finished.slice(0, Math.max(0, finished.length - select.keepNewest));
  const batch = doomed.slice(0, limit);
  for (const [id] of batch) store.entries.delete(id);
  return batch.length;
}

export function claimPruner(store: MemoryStore, { owner, ttlMs }: { owner: string; ttlMs: number }): boolean {
  const now = Date.now();
  if (store.pruner && store.pruner.owner !== owner && store.pruner.until > now) return false;
  store.pruner = { owner, until: now + ttlMs };
  return true;
}

export function releasePruner(store: MemoryStore, { owner }: { owner: string }): void {
  if (store.pruner?.owner === owner) store.pruner = null;
}

export function setLimits(store: MemoryStore, { limits }: { limits: LimitMap }): void {
  store.limits = limits;
  store.starts.clear();
  for (const [task, limit] of limits) if (limit.rateLimit) store.starts.set(task, new StartWindow(limit.rateLimit));
}

export function limitUsage(store: MemoryStore, { task }: { task: string }): LimitUsage {
  const now = Date.now();
  const window = store.starts.get(task);
  const rate = store.limits.get(task)?.rateLimit;
  return { running: store.runningOf(now).get(task) ?? 0, startedInWindow: window && rate ? rate.max - window.room(now) : 0 };
}
