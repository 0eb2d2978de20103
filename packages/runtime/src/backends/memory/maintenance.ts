import { StartWindow, type LimitMap, type LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { Entry, MemoryStore } from "./store.js";

export function prune(store: MemoryStore, { state, select, limit }: PruneParams): number {
  const at = (e: Entry) => (state === RetainedState.dead ? (e.diedAt ?? 0) : (e.finishedAt ?? 0));
  // Oldest first, ties by enqueue order, as the other backends read their indexes.
  // A step of a flow still running is kept: the steps after it read its result (docs/flows.md#states).
  const finished = [...store.entries.entries()]
    .filter(([, e]) => e.state === state && !inUnfinishedFlow(store, e))
    .sort(([, a], [, b]) => at(a) - at(b) || a.seq - b.seq);
  const doomed =
    "before" in select ? finished.filter(([, e]) => at(e) < select.before.getTime()) : finished.slice(0, Math.max(0, finished.length - select.keepNewest));
  const batch = doomed.slice(0, limit);
  const flows = new Set<string>();
  for (const [id, entry] of batch) {
    store.entries.delete(id);
    if (entry.json.flow) flows.add(entry.json.flow.id);
  }
  // A finished flow goes with its last step.
  for (const flowId of flows) {
    const flow = store.flows.get(flowId);
    if (flow && !flow.steps.some((stepId) => store.entries.has(stepId))) store.flows.delete(flowId);
  }
  return batch.length;
}

function inUnfinishedFlow(store: MemoryStore, entry: Entry): boolean {
  const flow = entry.json.flow ? store.flows.get(entry.json.flow.id) : undefined;
  return flow !== undefined && flow.finishedAt === null;
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
