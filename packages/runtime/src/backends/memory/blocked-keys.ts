import type { BlockedKey } from "../../core/backend/admin.js";
import { JobState } from "../../core/job-state.js";
import type { MemoryStore } from "./store.js";

/** Keys of ordered tasks (onDead "block") held by a dead job, oldest death first (docs/flow-control.md#order-per-key). */
export function blockedKeys(store: MemoryStore, { limit }: { limit: number }): BlockedKey[] {
  const found = new Map<string, BlockedKey>();
  for (const e of store.entries.values()) {
    if (e.state !== JobState.dead || e.json.limitKey === undefined || store.orderedTasks.get(e.json.task) !== "block") continue;
    // A skipped key's dead job holds nothing (skipBlockedKey).
    if (e.json.limitKey.includes("\u0001")) continue;
    const k = `${e.json.task}\u0000${e.json.limitKey}`;
    const diedAt = new Date(e.diedAt ?? 0).toISOString();
    const seen = found.get(k);
    if (!seen || diedAt < seen.diedAt) found.set(k, { task: e.json.task, key: e.json.limitKey, jobId: e.json.id, diedAt, waiting: 0 });
  }
  for (const e of store.entries.values()) {
    if (e.json.limitKey === undefined || (e.state !== JobState.ready && e.state !== JobState.running)) continue;
    const blocked = found.get(`${e.json.task}\u0000${e.json.limitKey}`);
    if (blocked) blocked.waiting++;
  }
  return [...found.values()].sort((a, b) => a.diedAt.localeCompare(b.diedAt)).slice(0, limit);
}

/** The key's dead jobs no longer hold it: their key is moved aside (they stay dead letters). */
export function skipBlockedKey(store: MemoryStore, { task, key }: { task: string; key: string }): { skipped: string[] } {
  const skipped: string[] = [];
  for (const e of store.entries.values()) {
    if (e.state !== JobState.dead || e.json.task !== task || e.json.limitKey !== key) continue;
    e.json.limitKey = `${key}\u0001skipped`;
    skipped.push(e.json.id);
  }
  if (skipped.length > 0) store.wake();
  return { skipped };
}
