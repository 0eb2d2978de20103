import { isKeyed, type LimitMap, type LimitUsage } from "../../core/limits.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { RedisQueue } from "./context.js";

const MAX_WORKERS_PER_SWEEP = 100;

export async function prune(q: RedisQueue, { state, select, limit }: PruneParams): Promise<number> {
  const set = state === RetainedState.completed ? q.keys.completed : state === RetainedState.dead ? q.keys.dead : q.keys.cancelled;
  const [mode, value] = "before" in select ? ["before", select.before.getTime()] : ["keep", select.keepNewest];
  return Number(await q.script("prune", "prune finished jobs", [set, mode, value, limit]));
}

/**
 * Per-key state of keys with no job waiting on their list (prune-keys.lua, docs/flow-control.md#pruning-per-key-state):
 * one bounded step of each keyed task's scans per call. Returns how many entries went, or `limit` while a scan has
 * more to read, so the pruner calls again.
 */
export async function pruneKeys(q: RedisQueue, { limit }: { limit: number }): Promise<number> {
  const [pruned, more] = (await q.script("prune-keys", "prune per-key state", [q.keys.limitPrefix, q.keys.limits, limit, ...q.limited.keyed])) as [number, number];
  return more === 1 ? Math.max(pruned, limit) : pruned;
}

export async function claimPruner(q: RedisQueue, { owner, ttlMs }: { owner: string; ttlMs: number }): Promise<boolean> {
  return Number(await q.script("claim-pruner", "claim the pruner", [q.keys.pruner, owner, Math.max(1, Math.round(ttlMs))])) === 1;
}

export async function releasePruner(q: RedisQueue, { owner }: { owner: string }): Promise<void> {
  await q.script("release-pruner", "release the pruner", [q.keys.pruner, owner]);
}

/** Returns the processing lists of workers whose heartbeat expired. Runs on setup and on the heartbeat timer. */
export async function sweep(q: RedisQueue): Promise<{ jobs: number; workers: number }> {
  const [jobs, workers] = (await q.script("recover", "recover the jobs of vanished workers", ["stale", MAX_WORKERS_PER_SWEEP, q.lostTail])) as [number, number];
  if (workers > 0) q.options.logger?.warn("returned the jobs of workers that stopped heartbeating", { queue: q.options.queue, workers, jobs });
  return { jobs, workers };
}

/** Writes the limits hash whole (every process declares the same); claim.lua reads it. */
export async function setLimits(q: RedisQueue, { limits }: { limits: LimitMap }): Promise<void> {
  const fields: string[] = [];
  // A task whose jobs carry a key (docs/flow-control.md) adds: flags ("k": the concurrency holds per key; "f": keys
  // take turns; "o": one job of a key at a time, in order, "b": a dead one blocks its key), its per-key rate
  // limit's max and window, and its keys' weights as JSON.
  for (const [task, l] of limits) {
    const task3 = `${l.concurrency ?? ""}|${l.rateLimit?.max ?? ""}|${l.rateLimit?.perMs ?? ""}`;
    if (!isKeyed(l)) {
      fields.push(task, task3);
      continue;
    }
    const flags = `${l.perKey ? "k" : ""}${l.fair ? "f" : ""}${l.ordered ? (l.ordered.onDead === "block" ? "ob" : "o") : ""}`;
    const weights = l.fair && Object.keys(l.fair.weights).length > 0 ? JSON.stringify(l.fair.weights) : "";
    fields.push(task, `${task3}|${flags}|${l.keyRate?.max ?? ""}|${l.keyRate?.perMs ?? ""}|${weights}`);
  }
  await q.guard("declare task limits", () => {
    const multi = q.redis.multi().del(q.keys.limits);
    if (fields.length > 0) multi.hset(q.keys.limits, ...fields);
    return multi.exec();
  });
  q.limited.declare(limits);
}

export async function limitUsage(q: RedisQueue, { task }: { task: string }): Promise<LimitUsage> {
  const now = Date.now();
  const holders = await q.guard("read task limits", () => q.redis.smembers(`${q.keys.limitPrefix}holders:${task}`));
  let running = 0;
  for (const id of holders) {
    const [state, lease] = await q.guard("read task limits", () => q.redis.hmget(q.keys.job(id), "state", "lease"));
    if (state === "running" && Number(lease) >= now) running++;
  }
  const limit = await q.guard("read task limits", () => q.redis.hget(q.keys.limits, task));
  const perMs = Number(limit?.split("|")[2] || 0);
  const startedInWindow = perMs > 0 ? await q.guard("read task limits", () => q.redis.zcount(`${q.keys.limitPrefix}starts:${task}`, `(${now - perMs}`, "+inf")) : 0;
  return { running, startedInWindow };
}
