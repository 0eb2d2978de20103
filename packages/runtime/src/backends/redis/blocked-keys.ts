import type { BlockedKey } from "../../core/backend/admin.js";
import type { RedisQueue } from "./context.js";

/**
 * Keys of tasks with orderedBy (onDead "block") whose head is dead (docs/flow-control.md#order-per-key): per task,
 * the keys that ever had a head (<prefix>kordered:<task>), each head's state read; a key whose head finished is
 * dropped from the set on the way. Oldest death first.
 */
export async function blockedKeys(q: RedisQueue, { limit }: { limit: number }): Promise<BlockedKey[]> {
  const found: BlockedKey[] = [];
  for (const task of q.limited.blockingOnDead) {
    const keys = await q.redis.smembers(`${q.keys.limitPrefix}kordered:${task}`);
    for (const key of keys) {
      const holder = await q.redis.get(`${q.keys.limitPrefix}korder:${task}:${key}`);
      if (!holder) continue;
      const [state, diedAt] = await q.redis.hmget(q.keys.job(holder), "state", "died_at");
      if (state !== "dead") continue;
      const waiting = await q.redis.llen(`${q.keys.limitPrefix}kparked:${task}:${key}`);
      found.push({ task, key, jobId: holder, diedAt: new Date(Number(diedAt ?? 0)).toISOString(), waiting });
    }
  }
  return found.sort((a, b) => a.diedAt.localeCompare(b.diedAt)).slice(0, limit);
}

/** The key's dead head no longer holds it (it stays a dead letter); its next job starts at the next claim. */
export async function skipBlockedKey(q: RedisQueue, { task, key }: { task: string; key: string }): Promise<{ skipped: string[] }> {
  const lock = `${q.keys.limitPrefix}korder:${task}:${key}`;
  const holder = await q.redis.get(lock);
  if (!holder) return { skipped: [] };
  const state = await q.redis.hget(q.keys.job(holder), "state");
  if (state !== "dead") return { skipped: [] };
  // Only if the head is still that dead job (a retry of it meanwhile made it the head again, running).
  const deleted = await q.redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, lock, holder);
  if (Number(deleted) > 0) await q.announce(Date.now());
  return { skipped: Number(deleted) > 0 ? [holder] : [] };
}
