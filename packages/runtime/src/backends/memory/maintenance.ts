import { countsAtClaim, StartWindow, type LimitMap, type LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import { JobState } from "../../core/job-state.js";
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

/**
 * Per-key state of keys with no open job (docs/flow-control.md#pruning-per-key-state): turn counts, and rate windows
 * with no start left in their span; at most `limit` keys. Returns how many entries went.
 */
export function pruneKeys(store: MemoryStore, { limit }: { limit: number }): number {
  const open = new Set<string>();
  for (const e of store.entries.values()) {
    if (e.json.limitKey !== undefined && (e.state === JobState.ready || e.state === JobState.running)) open.add(`${e.json.task}\u0000${e.json.limitKey}`);
  }
  const now = Date.now();
  let pruned = 0;
  for (const k of new Set([...store.turns.keys(), ...store.turnTicks.keys()])) {
    if (pruned >= limit) break;
    if (open.has(k)) continue;
    store.turns.delete(k);
    store.turnTicks.delete(k);
    pruned++;
  }
  for (const [k, window] of store.keyStarts) {
    if (pruned >= limit) break;
    if (open.has(k) || window.nextAt(now) !== null || window.room(now) < (store.keyRates.get(k.split("\u0000")[0]!)?.max ?? 0)) continue;
    store.keyStarts.delete(k);
    pruned++;
  }
  return pruned;
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
  store.orderedTasks = new Map([...limits].flatMap(([task, l]) => (l.ordered ? [[task, l.ordered.onDead] as const] : [])));
  store.keyRates = new Map([...limits].flatMap(([task, l]) => (l.keyRate ? [[task, l.keyRate] as const] : [])));
  store.keyStarts.clear();
  store.uncountedTasks = new Set([...limits].flatMap(([task, l]) => (countsAtClaim(l) ? [] : [task])));
  store.fairTasks = new Map([...limits].flatMap(([task, l]) => (l.fair ? [[task, l.fair.weights] as const] : [])));
  store.keyedTasks = new Map([...limits].flatMap(([task, l]) => (l.perKey && l.concurrency !== null ? [[task, l.concurrency] as const] : [])));
  store.starts.clear();
  for (const [task, limit] of limits) if (limit.rateLimit) store.starts.set(task, new StartWindow(limit.rateLimit));
}

export function limitUsage(store: MemoryStore, { task }: { task: string }): LimitUsage {
  const now = Date.now();
  const window = store.starts.get(task);
  const rate = store.limits.get(task)?.rateLimit;
  return { running: store.runningOf(now).get(task) ?? 0, startedInWindow: window && rate ? rate.max - window.room(now) : 0 };
}
