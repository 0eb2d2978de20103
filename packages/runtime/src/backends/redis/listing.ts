import { decodeCursor, encodeCursor, LIST_WINDOW } from "../../core/job-listing.js";
import { JobState } from "../../core/job-state.js";
import { jobLifeFields, parseProgress, parseRuns } from "../../core/job-life.js";
import { ListOrder, ListState, type JobInfo, type JobListing, type ListJobsParams } from "../../core/queue-backend.js";
import { NotSupportedError } from "../../errors/jfast-error.js";
import type { RedisClient } from "./connection.js";
import { decodeJobForDisplay, msToIso } from "./decode.js";
import type { QueueKeys } from "./keys.js";

/** A sorted set listed by score, and the state its jobs' hashes carry. */
interface SortedSource {
  key: (keys: QueueKeys) => string;
  stored: JobState;
  /** Scheduled jobs whose time has passed wait for a promotion to the ready list: ready, not listed as scheduled. */
  futureOnly?: true;
}

/**
 * The sorted sets of each state. Scheduled reads two, merged by (score, id): delayed jobs and retries, and flow
 * steps waiting for their parents (by their own due time; listed as scheduled whatever it is, core/job-listing.ts).
 */
const SORTED: Partial<Record<ListState, SortedSource[]>> = {
  scheduled: [
    { key: (k) => k.scheduled, stored: JobState.ready, futureOnly: true },
    { key: (k) => k.waiting, stored: JobState.waiting },
  ],
  running: [{ key: (k) => k.running, stored: JobState.running }],
  dead: [{ key: (k) => k.dead, stored: JobState.dead }],
  completed: [{ key: (k) => k.completed, stored: JobState.completed }],
};

/**
 * One page of a state (docs/redis.md#listing-jobs): at most LIST_WINDOW ids read from the state's structure after
 * the cursor, their hashes read in one pipeline, filtered here by task and tenant. Sorted sets page by (score, id),
 * exact; the ready lists and the lists of held jobs by position, which a claim shifts (`exact: false`). Cancelled jobs are in no structure.
 */
export async function listRedisJobs(redis: RedisClient, keys: QueueKeys, params: ListJobsParams, readHeld: ReadHeld): Promise<JobListing> {
  if (params.state === ListState.cancelled) {
    throw new NotSupportedError("the Redis queue cannot list cancelled jobs: a cancelled job is kept only as its own hash, which expires, and no set holds them", {
      hint: "look a cancelled job up by id (jfast jobs show <id>) while its hash lives ([plugin.queue] completed retention, at least an hour)",
      docs: "jfast docs redis#listing-jobs",
    });
  }
  if (params.state === ListState.expired) {
    throw new NotSupportedError("the Redis queue cannot list expired jobs: an expired job is kept as a cancelled one is, as its own hash, which expires", {
      hint: "look an expired job up by id (jfast jobs show <id>) while its hash lives (docs/flow-control.md#deadlines)",
      docs: "jfast docs redis#listing-jobs",
    });
  }
  if (params.state === ListState.ready) return listReady(redis, keys, params, readHeld);
  const sources = SORTED[params.state]!;
  const after = decodeCursor(params, 2) as [number, string] | null;
  const now = Date.now();
  const oldest = params.order === ListOrder.oldest;
  const windows = await Promise.all(
    sources.map(async (source) => {
      const floor = source.futureOnly ? `(${now}` : "-inf";
      const key = source.key(keys);
      const flat = oldest
        ? await redis.zrangebyscore(key, after ? String(after[0]) : floor, "+inf", "WITHSCORES", "LIMIT", 0, LIST_WINDOW)
        : await redis.zrevrangebyscore(key, after ? String(after[0]) : "+inf", floor, "WITHSCORES", "LIMIT", 0, LIST_WINDOW);
      const read: Array<{ id: string; score: number; stored: JobState }> = [];
      for (let i = 0; i < flat.length; i += 2) read.push({ id: flat[i]!, score: Number(flat[i + 1]), stored: source.stored });
      return read;
    }),
  );
  // Each set's first LIST_WINDOW past the cursor holds every entry of the merged first LIST_WINDOW.
  const before = (a: { id: string; score: number }, b: { id: string; score: number }) =>
    oldest ? a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : b.score - a.score || (a.id > b.id ? -1 : a.id < b.id ? 1 : 0);
  const entries = windows.length === 1 ? windows[0]! : windows.flat().sort(before).slice(0, LIST_WINDOW);
  // The cursor's own score is read again (inclusive): of those, only ids past the cursor's are new.
  const fresh = after ? entries.filter((e) => e.score !== after[0] || (oldest ? e.id > after[1] : e.id < after[1])) : entries;
  const infos = await readJobs(redis, keys, fresh.map((e) => e.id));
  const matched: Array<{ info: JobInfo; key: [number, string] }> = [];
  fresh.forEach((entry, i) => {
    const info = infos[i];
    if (info && info.state === entry.stored && filtersMatch(info, params)) matched.push({ info, key: [entry.score, entry.id] });
  });
  const page = matched.slice(0, params.limit);
  const last = page.at(-1);
  const edge = entries.at(-1);
  let next: string | null = null;
  if (page.length >= params.limit && last) next = encodeCursor(params, last.key);
  else if (entries.length >= LIST_WINDOW && edge) next = encodeCursor(params, [edge.score, edge.id]);
  return { rows: page.map((m) => m.info), next, exact: true };
}

/**
 * The waiting jobs no ready list holds (list-keyed.lua): a limited or paused task's set-aside jobs and keyed tasks'
 * jobs on their keys' own lists, as one sequence from `offset`; `total` is its length.
 */
export type ReadHeld = (params: { offset: number; count: number; order: ListOrder }) => Promise<{ total: number; ids: string[] }>;

/**
 * The ready state by position (docs/redis.md#listing-jobs), as one sequence in claim order: the ready lists,
 * priority 0's from its claiming end first (oldest), then the jobs held on their tasks' and keys' own lists (by
 * task, then key, each list oldest first); `newest` reads the same sequence from its other end. The cursor is an
 * offset into it. docs/tasks.md#priority
 */
async function listReady(redis: RedisClient, keys: QueueKeys, params: ListJobsParams, readHeld: ReadHeld): Promise<JobListing> {
  const after = decodeCursor(params, 1) as [number] | null;
  const offset = after?.[0] ?? 0;
  const oldest = params.order === ListOrder.oldest;
  const ids: string[] = [];
  // Newest first: the held jobs come first, then the ready lists.
  let skip = offset;
  if (!oldest) {
    const held = await readHeld({ offset, count: LIST_WINDOW, order: params.order });
    ids.push(...held.ids);
    skip = Math.max(0, offset - held.total);
  }
  const lists = oldest ? keys.readyLists : [...keys.readyLists].reverse();
  const lengths = ids.length < LIST_WINDOW ? await Promise.all(lists.map((list) => redis.llen(list))) : [];
  for (let i = 0; i < lengths.length && ids.length < LIST_WINDOW; i++) {
    const length = lengths[i]!;
    if (skip >= length) {
      skip -= length;
      continue;
    }
    const want = Math.min(LIST_WINDOW - ids.length, length - skip);
    const part = oldest
      ? (await redis.lrange(lists[i]!, -(skip + want), -(skip + 1))).reverse()
      : await redis.lrange(lists[i]!, skip, skip + want - 1);
    ids.push(...part);
    skip = 0;
  }
  if (oldest && ids.length < LIST_WINDOW) {
    const ready = lengths.reduce((sum, n) => sum + n, 0);
    ids.push(...(await readHeld({ offset: Math.max(0, offset - ready), count: LIST_WINDOW - ids.length, order: params.order })).ids);
  }
  const infos = await readJobs(redis, keys, ids);
  const page: JobInfo[] = [];
  let consumed = 0;
  for (const info of infos) {
    if (page.length >= params.limit) break;
    consumed += 1;
    if (info && info.state === JobState.ready && filtersMatch(info, params)) page.push(info);
  }
  const more = page.length >= params.limit ? consumed < ids.length || ids.length >= LIST_WINDOW : ids.length >= LIST_WINDOW;
  return { rows: page, next: more ? encodeCursor(params, [offset + consumed]) : null, exact: false };
}

function filtersMatch(info: JobInfo, params: ListJobsParams): boolean {
  return (params.task === undefined || info.job.task === params.task) && (params.tenantId === undefined || info.job.tenantId === params.tenantId);
}

const FIELDS = ["json", "attempts", "errors", "available_at", "state", "owner", "lease", "died_at", "runs", "progress"] as const;

/** The hashes of `ids` in one round trip (one slot: every key carries the queue's hash tag); null for a missing one. */
async function readJobs(redis: RedisClient, keys: QueueKeys, ids: string[]): Promise<Array<JobInfo | null>> {
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(keys.job(id), ...FIELDS);
  const replies = (await pipeline.exec()) ?? [];
  return ids.map((id, i) => {
    const [error, value] = replies[i] ?? [null, null];
    if (error) throw error;
    const [json, attempts, errors, availableAt, state, owner, lease, diedAt, runs, progress] = value as Array<string | null>;
    if (json === null && state === null) return null;
    const known = (Object.values(JobState) as string[]).includes(state ?? "") ? (state as JobState) : JobState.ready;
    const job = decodeJobForDisplay(id, [json ?? null, attempts ?? null, errors ?? null, availableAt ?? null]);
    return {
      job,
      state: known,
      lockedBy: known === JobState.running ? (owner ?? null) : null,
      lockedUntil: known === JobState.running ? msToIso(lease) : null,
      diedAt: known === JobState.dead ? msToIso(diedAt) : null,
      // Each row's timing and progress (docs/jobs.md#timing): finished lists show durations.
      ...jobLifeFields({ runs: parseRuns(runs), errors: job.errors, createdAt: job.createdAt, running: known === JobState.running, progress: parseProgress(progress) }),
    };
  });
}
