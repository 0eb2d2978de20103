import { JobState } from "../../core/job-state.js";
import {
  ListOrder,
  type DeadJob,
  type Depths,
  type JobActionResult,
  type JobUpdate,
  type JobInfo,
  type JobListing,
  type ListJobsParams,
  type RequestJob,
  type RetryDeadParams,
  type TaskDepths,
} from "../../core/queue-backend.js";
import { decodeCursor, encodeCursor, listById, matchesListing } from "../../core/job-listing.js";
import { rewriteParts, type StoredParts, type StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { Entry, MemoryStore } from "./store.js";
import { stepRevived } from "./flows.js";

export function getJob(store: MemoryStore, { id }: { id: string }): JobInfo | null {
  const e = store.entries.get(id);
  return e ? store.info(e) : null;
}

/** A request's jobs, oldest first: the whole store is in this process, so its entries are read as they are. */
export function jobsByRequest(store: MemoryStore, { requestId, limit }: { requestId: string; limit: number }): RequestJob[] {
  const found: Entry[] = [];
  for (const e of store.entries.values()) if (e.json.requestId === requestId) found.push(e);
  found.sort((a, b) => a.seq - b.seq);
  return found.slice(0, limit).map((e) => ({ info: store.info(e), finishedAt: isoOrNull(e.finishedAt ?? e.diedAt) }));
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Every entry of the state, sorted by its time then enqueue order; the whole store is in this process. */
export async function listJobs(store: MemoryStore, params: ListJobsParams): Promise<JobListing> {
  if (params.id !== undefined) return listById(async (p) => getJob(store, p), { ...params, id: params.id });
  const now = Date.now();
  const after = decodeCursor(params, 2) as [number, number] | null;
  const sign = params.order === ListOrder.oldest ? 1 : -1;
  const keyOf = (e: Entry): [number, number] => [listTime(e), e.seq];
  const rows = [...store.entries.values()]
    .filter((e) => matchesListing(store.info(e), params, now))
    .map((e) => ({ e, key: keyOf(e) }))
    .filter(({ key }) => after === null || sign * (key[0] - after[0] || key[1] - after[1]) > 0)
    .sort((a, b) => sign * (a.key[0] - b.key[0] || a.key[1] - b.key[1]));
  const page = rows.slice(0, params.limit);
  const last = page.at(-1);
  return {
    rows: page.map(({ e }) => store.info(e)),
    next: rows.length > params.limit && last ? encodeCursor(params, last.key) : null,
    exact: true,
  };
}

function listTime(e: Entry): number {
  if (e.state === JobState.dead) return e.diedAt ?? 0;
  if (e.state === JobState.completed || e.state === JobState.cancelled || e.state === JobState.expired) return e.finishedAt ?? 0;
  return Date.parse(e.json.availableAt);
}

export function runNow(store: MemoryStore, { id }: { id: string }): JobActionResult {
  const entry = store.entries.get(id);
  if (!entry) return { done: false, state: null };
  if (entry.state !== JobState.ready) return { done: false, state: entry.state };
  entry.json.availableAt = new Date().toISOString();
  store.wake();
  return { done: true, state: JobState.ready };
}

/** A waiting job's payload, priority or run time changed in place; any other state is left as it is. */
export function updateJob(store: MemoryStore, params: JobUpdate): JobActionResult {
  const entry = store.entries.get(params.id);
  if (!entry) return { done: false, state: null };
  if (entry.state !== JobState.ready) return { done: false, state: entry.state };
  if (params.payload !== undefined) entry.json.payload = structuredClone(params.payload);
  if (params.priority !== undefined) entry.json.priority = params.priority;
  if (params.availableAt !== undefined) entry.json.availableAt = params.availableAt.toISOString();
  store.wake();
  return { done: true, state: JobState.ready };
}

export function deleteJob(store: MemoryStore, { id }: { id: string }): JobActionResult {
  const entry = store.entries.get(id);
  if (!entry) return { done: false, state: null };
  if (entry.state !== JobState.ready) return { done: false, state: entry.state };
  store.entries.delete(id);
  return { done: true, state: null };
}

export function listDead(store: MemoryStore, { limit, offset = 0 }: { limit: number; offset?: number }): DeadJob[] {
  return [...store.entries.values()]
    .filter((e) => e.state === JobState.dead)
    .sort((a, b) => (b.diedAt ?? 0) - (a.diedAt ?? 0) || b.seq - a.seq)
    .slice(offset, offset + limit)
    .map((e) => ({
      job: structuredClone(e.json),
      diedAt: new Date(e.diedAt ?? 0).toISOString(),
      lastError: e.json.errors.at(-1) ?? null,
    }));
}

export function retryDead(store: MemoryStore, params: RetryDeadParams): { retried: string[]; missing: string[] } {
  const { found, missing } = selectDead(store, params);
  for (const entry of found) {
    entry.state = JobState.ready;
    entry.json.attempts = 0;
    entry.json.availableAt = new Date().toISOString();
    entry.diedAt = null;
    if (entry.flow) stepRevived(store, entry);
  }
  if (found.length > 0) store.wake();
  return { retried: found.map((e) => e.json.id), missing };
}

export function discardDead(store: MemoryStore, params: RetryDeadParams): { discarded: string[]; missing: string[] } {
  const { found, missing } = selectDead(store, params);
  for (const entry of found) store.entries.delete(entry.json.id);
  return { discarded: found.map((e) => e.json.id), missing };
}

function selectDead(store: MemoryStore, params: RetryDeadParams): { found: Entry[]; missing: string[] } {
  if ("all" in params) return { found: [...store.entries.values()].filter((e) => e.state === JobState.dead), missing: [] };
  const found: Entry[] = [];
  const missing: string[] = [];
  for (const id of params.ids) {
    const entry = store.entries.get(id);
    if (entry && entry.state === JobState.dead) found.push(entry);
    else missing.push(id);
  }
  return { found, missing };
}

export function depths(store: MemoryStore): Depths {
  const now = Date.now();
  const depths: Depths = { ready: 0, scheduled: 0, running: 0, dead: 0 };
  for (const e of store.entries.values()) {
    if (e.state === JobState.ready) {
      if (Date.parse(e.json.availableAt) <= now) depths.ready++;
      else depths.scheduled++;
    } else if (e.state === JobState.running) depths.running++;
    else if (e.state === JobState.dead) depths.dead++;
  }
  return depths;
}

export function depthsByTask(store: MemoryStore, params: { tenantId?: string | undefined } = {}): TaskDepths {
  const now = Date.now();
  const tasks: Record<string, Depths> = {};
  for (const e of store.entries.values()) {
    if (e.state === JobState.completed || e.state === JobState.cancelled) continue;
    if (params.tenantId !== undefined && e.json.tenantId !== params.tenantId) continue;
    const depths = (tasks[e.json.task] ??= { ready: 0, scheduled: 0, running: 0, dead: 0 });
    if (e.state === JobState.ready) {
      if (Date.parse(e.json.availableAt) <= now) depths.ready++;
      else depths.scheduled++;
    } else if (e.state === JobState.running) depths.running++;
    else depths.dead++;
  }
  return { tasks, exact: true };
}

/** `jfast keys rotate` (core/stored-rewrite.ts): in place, between two awaits, so no claim can interleave. */
export function rewriteStored(store: MemoryStore, params: { rewrite(parts: StoredParts): StoredParts | null }): StoredRewriteResult {
  const result: StoredRewriteResult = { waiting: 0, dead: 0, skipped: [] };
  for (const entry of store.entries.values()) {
    if (entry.state !== JobState.ready && entry.state !== JobState.dead) continue;
    const next = rewriteParts(entry.json.id, { payload: entry.json.payload, errors: entry.json.errors }, params.rewrite, result.skipped);
    if (!next) continue;
    entry.json = { ...entry.json, payload: next.payload, errors: next.errors };
    if (entry.state === JobState.dead) result.dead++;
    else result.waiting! += 1;
  }
  return result;
}
