import { JobState } from "../../core/job-state.js";
import type { DeadJob, Depths, JobActionResult, JobInfo, JobUpdate, JobListing, ListJobsParams, RetryDeadParams, TaskDepths } from "../../core/queue-backend.js";
import { listById } from "../../core/job-listing.js";
import type { ListOrder } from "../../core/queue-backend.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { RedisQueue } from "./context.js";
import { resultOfHash } from "./results.js";
import { decodeJobForDisplay, msToIso, type StoredFields } from "./decode.js";
import { translateRedisError } from "./errors.js";
import { listRedisJobs } from "./listing.js";
import { rewriteStoredJobs } from "./rewrite-stored.js";
import { jobLifeFields, parseProgress, parseRuns } from "../../core/job-life.js";

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
    ...jobLifeFields({ runs: parseRuns(hash.runs), errors: job.errors, createdAt: job.createdAt, running: state === JobState.running, progress: parseProgress(hash.progress) }),
  };
}

/** From each state's list or sorted set, a bounded window per page (listing.ts). */
export async function listJobs(q: RedisQueue, params: ListJobsParams): Promise<JobListing> {
  if (params.id !== undefined) return listById((p) => getJob(q, p), { ...params, id: params.id });
  return q.guard("list jobs", () => listRedisJobs(q.redis, q.keys, params, (window) => readHeld(q, window)));
}

/**
 * A window of the waiting jobs held off the ready lists (list-keyed.lua): the set-aside jobs of the tasks limited
 * (as any process declared them) or paused, and keyed tasks' jobs on their keys' lists, found as depths-keyed.lua
 * finds them; one LLEN per list, an LRANGE only where the window falls.
 */
async function readHeld(q: RedisQueue, window: { offset: number; count: number; order: ListOrder }): Promise<{ total: number; ids: string[] }> {
  const { keys } = q;
  const args = [keys.limitPrefix, keys.parkedPrefix, window.offset, window.count, window.order, keys.limits, keys.paused, ...q.limited.keyed];
  const [total, ids] = (await q.script("list-keyed", "list jobs waiting on their keys' lists", args)) as [number, string[]];
  return { total: Number(total), ids };
}

export async function runNow(q: RedisQueue, { id }: { id: string }): Promise<JobActionResult> {
  const [done, state] = (await q.script("run-now", "run a job now", [id])) as [number, string];
  return { done: done === 1, state: state === "" ? null : (state as JobState) };
}

/**
 * A waiting job's payload, priority or run time (update-job.lua): the JSON is read, edited here and written back
 * only if it is still the one read and the job still waits; a JSON changed in between is read again, a few times.
 */
export async function updateJob(q: RedisQueue, params: JobUpdate): Promise<JobActionResult> {
  for (let round = 0; round < 3; round++) {
    const json = await q.guard("read a job", () => q.redis.hget(q.keys.job(params.id), "json"));
    if (json === null) return { done: false, state: null };
    const stored = JSON.parse(json) as Record<string, unknown>;
    const edited = {
      ...stored,
      ...(params.payload !== undefined ? { payload: params.payload } : {}),
      ...(params.priority !== undefined ? { priority: params.priority } : {}),
      ...(params.availableAt !== undefined ? { availableAt: params.availableAt.toISOString() } : {}),
    };
    const args = [params.id, json, JSON.stringify(edited), params.priority ?? "", params.availableAt?.getTime() ?? ""];
    const [changed, state] = (await q.script("update-job", "update a job", args)) as [number, string];
    if (changed !== 2) return { done: changed === 1, state: state === "" ? null : (state as JobState) };
  }
  return { done: false, state: JobState.ready };
}

export async function deleteJob(q: RedisQueue, { id }: { id: string }): Promise<JobActionResult> {
  const [done, state] = (await q.script("delete-job", "delete a job", [id, q.keys.parkedPrefix, q.keys.limitPrefix])) as [number, string];
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
  const keyed = await keyedDepths(q);
  const lists = keys.readyLists.length;
  const values = (results ?? []).slice(0, lists + 4).map(([error, value]) => {
    if (error) throw translateRedisError(error, { operation: "read depths", url: q.options.url, queue: q.options.queue });
    return Number(value);
  });
  const ready = values.slice(0, lists).reduce((sum, n) => sum + n, 0);
  const [dueScheduled = 0, scheduled = 0, running = 0, dead = 0] = values.slice(lists);
  // A delayed job whose time has come counts as ready even before a claim promotes it.
  // Keyed tasks' due jobs wait on their keys' own lists, not the ready lists: ready too.
  const onKeys = [...keyed.counts.values()].reduce((sum, n) => sum + n, 0);
  return { ready: ready + dueScheduled + parked.reduce((sum, n) => sum + n, 0) + onKeys, scheduled, running, dead };
}

/**
 * Task → its waiting jobs held on its keys' own lists (depths-keyed.lua): one LLEN per key with waiting jobs of the
 * queue's limited tasks (as declared in the limits hash, by any process), none per job; a queue without limited
 * tasks pays one script call. With a tenant, a sample of each list.
 */
async function keyedDepths(q: RedisQueue, tenantId = ""): Promise<{ counts: Map<string, number>; exact: boolean }> {
  const counts = new Map<string, number>();
  const args = [q.keys.limitPrefix, tenantId, TASK_SAMPLE, q.keys.limits, ...q.limited.keyed];
  const [exact, flat] = (await q.script("depths-keyed", "count jobs waiting on their keys' lists", args)) as [
    number,
    Array<string | number>,
  ];
  for (let i = 0; i < flat.length; i += 2) counts.set(String(flat[i]), Number(flat[i + 1]));
  return { counts, exact: exact === 1 };
}

/**
 * Per task from a sample of at most TASK_SAMPLE jobs per structure (depths-by-task.lua), scaled to the
 * structure's size: exact while every structure is that small, an estimate beyond.
 */
export async function depthsByTask(q: RedisQueue, params: { tenantId?: string | undefined } = {}): Promise<TaskDepths> {
  const rows = (await q.script("depths-by-task", "count depths per task", [TASK_SAMPLE, params.tenantId ?? "", q.keys.paused, q.keys.parkedPrefix])) as Array<
    [Exclude<keyof Depths, "estimated">, number, number, number, Array<string | number>]
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
  // Keyed tasks' due jobs wait on their keys' own lists, which the sample above does not read.
  const keyed = await keyedDepths(q, params.tenantId ?? "");
  for (const [task, n] of keyed.counts) (tasks[task] ??= { ready: 0, scheduled: 0, running: 0, dead: 0 }).ready += n;
  if (!keyed.exact) exact = false;
  return { tasks, exact };
}

/** `jfast keys rotate`: waiting jobs and dead letters re-encrypted in place (core/stored-rewrite.ts). */
export function rewriteStored(q: RedisQueue, params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
  return q.guard("rewrite stored jobs", () =>
    rewriteStoredJobs({ redis: q.redis, keys: q.keys, rewrite: params.rewrite, write: (args) => q.script("rewrite", "rewrite a job", args) }),
  );
}
