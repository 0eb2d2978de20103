import { JobState } from "../../core/job-state.js";
import type { DeadJob, Depths, JobActionResult, JobInfo, JobListing, ListJobsParams, RetryDeadParams, TaskDepths } from "../../core/queue-backend.js";
import { listById } from "../../core/job-listing.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { RedisQueue } from "./context.js";
import { resultOfHash } from "./results.js";
import { decodeJobForDisplay, msToIso, type StoredFields } from "./decode.js";
import { translateRedisError } from "./errors.js";
import { listRedisJobs } from "./listing.js";
import { rewriteStoredJobs } from "./rewrite-stored.js";

const DEAD_BATCH = 500;
/** Jobs read per structure to count depths per task; larger structures are estimated from this many. */
const TASK_SAMPLE = 1000;

export async function getJob(q: RedisQueue, { id }: { id: string }): Promise<JobInfo | null> {
  const hash = await q.guard("read a job", () => q.redis.hgetall(q.keys.job(id)));
  if (!hash.json && !hash.state) return null;
  const job = decodeJobForDisplay(id, [hash.json ?? null, hash.attempts ?? null, hash.errors ?? null, hash.available_at ?? null]);
  const state = (Object.values(JobState) as string[]).includes(hash.state ?? "") ? (hash.state as JobState) : JobState.ready;
  return {
    job,
    state,
    lockedBy: state === JobState.running || state === JobState.cancelled ? (hash.owner ?? null) : null,
    lockedUntil: state === JobState.running ? msToIso(hash.lease) : null,
    diedAt: state === JobState.dead ? msToIso(hash.died_at) : null,
    ...(state === JobState.completed ? resultOfHash(hash) : {}),
  };
}

/** From each state's list or sorted set, a bounded window per page (listing.ts). */
export async function listJobs(q: RedisQueue, params: ListJobsParams): Promise<JobListing> {
  if (params.id !== undefined) return listById((p) => getJob(q, p), { ...params, id: params.id });
  return q.guard("list jobs", () => listRedisJobs(q.redis, q.keys, params));
}

export async function runNow(q: RedisQueue, { id }: { id: string }): Promise<JobActionResult> {
  const [done, state] = (await q.script("run-now", "run a job now", [id])) as [number, string];
  return { done: done === 1, state: state === "" ? null : (state as JobState) };
}

export async function deleteJob(q: RedisQueue, { id }: { id: string }): Promise<JobActionResult> {
  const [done, state] = (await q.script("delete-job", "delete a job", [id, q.keys.parkedPrefix])) as [number, string];
  return { done: done === 1, state: state === "" ? null : (state as JobState) };
}

export async function listDead(q: RedisQueue, { limit, offset = 0 }: { limit: number; offset?: number }): Promise<DeadJob[]> {
  const rows = (await q.script("list-dead", "list dead letters", [offset, limit])) as Array<[string, string, ...StoredFields]>;
  return rows.map(([id, diedAt, ...fields]) => {
    const job = decodeJobForDisplay(id, fields);
    return { job, diedAt: msToIso(diedAt) ?? new Date(0).toISOString(), lastError: job.errors.at(-1) ?? null };
  });
}

export async function retryDead(q: RedisQueue, params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
  const [retried, missing] = await deadBatches(q, { name: "retry-dead", operation: "retry dead letters" }, params);
  return { retried, missing };
}

export async function discardDead(q: RedisQueue, params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
  const [discarded, missing] = await deadBatches(q, { name: "discard-dead", operation: "discard dead letters" }, params);
  return { discarded, missing };
}

async function deadBatches(q: RedisQueue, script: { name: "retry-dead" | "discard-dead"; operation: string }, params: RetryDeadParams): Promise<[string[], string[]]> {
  const { name, operation } = script;
  if (!("all" in params)) {
    if (params.ids.length === 0) return [[], []];
    return (await q.script(name, operation, ["ids", 0, ...params.ids])) as [string[], string[]];
  }
  const done: string[] = [];
  for (;;) {
    const [batch, dangling] = (await q.script(name, operation, ["all", DEAD_BATCH])) as [string[], string[]];
    done.push(...batch);
    if (batch.length + dangling.length < DEAD_BATCH) return [done, []];
  }
}

export async function depths(q: RedisQueue): Promise<Depths> {
  const now = Date.now();
  const { keys } = q;
  const results = await q.guard("read depths", () =>
    keys.readyLists
      .reduce((multi, list) => multi.llen(list), q.redis.multi())
      .zcount(keys.scheduled, "-inf", now)
      .zcount(keys.scheduled, `(${now}`, "+inf")
      .zcard(keys.running)
      .zcard(keys.dead)
      .hkeys(keys.paused)
      .exec(),
  );
  const paused = (results?.[keys.readyLists.length + 4]?.[1] as string[] | undefined) ?? [];
  // A paused task's jobs set aside by the claim are still waiting: ready; so are a limited task's over its limit.
  const pausedTasks = q.limited.size === 0 ? paused : [...new Set([...paused, ...q.limited.tasks])];
  const parked = pausedTasks.length === 0 ? [] : await q.guard("read depths", () => Promise.all(pausedTasks.map((task) => q.redis.llen(keys.parked(task)))));
  const lists = keys.readyLists.length;
  const values = (results ?? []).slice(0, lists + 4).map(([error, value]) => {
    if (error) throw translateRedisError(error, { operation: "read depths", url: q.options.url, queue: q.options.queue });
    return Number(value);
  });
  const ready = values.slice(0, lists).reduce((sum, n) => sum + n, 0);
  const [dueScheduled = 0, scheduled = 0, running = 0, dead = 0] = values.slice(lists);
  // A delayed job whose time has come counts as ready even before a claim promotes it.
  return { ready: ready + dueScheduled + parked.reduce((sum, n) => sum + n, 0), scheduled, running, dead };
}

/**
 * Per task from a sample of at most TASK_SAMPLE jobs per structure (depths-by-task.lua), scaled to the
 * structure's size: exact while every structure is that small, an estimate beyond.
 */
export async function depthsByTask(q: RedisQueue, params: { tenantId?: string | undefined } = {}): Promise<TaskDepths> {
  const rows = (await q.script("depths-by-task", "count depths per task", [TASK_SAMPLE, params.tenantId ?? "", q.keys.paused, q.keys.parkedPrefix])) as Array<
    [keyof Depths, number, number, number, Array<string | number>]
  >;
  const tasks: Record<string, Depths> = {};
  let exact = true;
  for (const [state, size, read, jobs, flat] of rows) {
    if (read < size) exact = false;
    const scale = jobs > 0 && read < size ? size / jobs : 1;
    for (let i = 0; i < flat.length; i += 2) {
      const depths = (tasks[String(flat[i])] ??= { ready: 0, scheduled: 0, running: 0, dead: 0 });
      depths[state] += Math.round(Number(flat[i + 1]) * scale);
    }
  }
  return { tasks, exact };
}

/** `jfast keys rotate`: waiting jobs and dead letters re-encrypted in place (core/stored-rewrite.ts). */
export function rewriteStored(q: RedisQueue, params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
  return q.guard("rewrite stored jobs", () =>
    rewriteStoredJobs({ redis: q.redis, keys: q.keys, rewrite: params.rewrite, write: (args) => q.script("rewrite", "rewrite a job", args) }),
  );
}
