import { JobState } from "../../core/job-state.js";
import { jobLifeFields, type AttemptRun, type JobProgress } from "../../core/job-life.js";
import {
  ListState,
  type DeadJob,
  type DeadSearch,
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
import { decodeCursor, encodeCursor, LIST_WINDOW, listById } from "../../core/job-listing.js";
import type { StoredParts, StoredRewriteResult } from "../../core/stored-rewrite.js";
import { BackendError } from "../../errors/jfast-error.js";
import type { PgQueue } from "./context.js";
import { rowToJson, toIso, toIsoOrNull, type JobRow } from "./job-rows.js";
import { SQL, type ListingSql } from "./load-sql.js";
import { rewriteStoredJobs } from "./rewrite-stored.js";

/**
 * Rows read at most per state to split the depths by task (depths-by-task.sql): live jobs sampled per state and
 * scaled to the exact totals, and one tenant's dead letters (no counter is kept per tenant). Exact below it.
 */
const TASK_SPLIT_READ = 10_000;
/**
 * Due rows read first to find the running jobs (depths.sql, depths-by-task.sql): they sit at the head of the
 * backlog, so a thousand covers every worker of most deployments. When the last row read is running too, the
 * count is read again ten times deeper, up to RUNNING_READ_MAX. Kept small so that the planner's estimate of
 * the statement stays under jit_above_cost (a JIT compilation costs more than the whole count).
 */
const RUNNING_READ = 1_000;
const RUNNING_READ_MAX = 100_000;
/**
 * Jobs counted exactly per state (ready, scheduled) in depths.sql and depths-by-task.sql. Past it the count is an
 * estimate from ESTIMATE_PAGES pages of jfast_jobs (depths-estimate.sql), and `estimated` says so: counting every
 * entry of a million-job backlog took 1.4 s on each probe of /ready and each refresh of the Overview.
 */
export const EXACT_COUNT_MAX = 50_000;
const ESTIMATE_PAGES = 1_000;

export async function getJob(q: PgQueue, { id }: { id: string }): Promise<JobInfo | null> {
  const [row] = await q.run("getJob", () => q.db.query<ListedRow>(SQL.getJob, [q.queue, id]));
  return row ? rowToInfo(row) : null;
}

/** A request's jobs on this queue, oldest first, through jfast_jobs_request_idx (jobs-by-request.sql). */
export async function jobsByRequest(q: PgQueue, { requestId, limit }: { requestId: string; limit: number }): Promise<RequestJob[]> {
  const rows = await q.run("jobsByRequest", () =>
    q.reader.query<ListedRow & { finished_at: Date | string | null }>(SQL.jobsByRequest, [q.queue, requestId, limit]),
  );
  return rows.map((row) => ({ info: rowToInfo(row), finishedAt: toIsoOrNull(row.finished_at ?? row.died_at) }));
}

/**
 * Through the index of each state (list-due.sql, list-scheduled.sql, list-dead-page.sql, list-finished.sql),
 * reading at most LIST_WINDOW entries per page; `next` continues after the last entry read.
 */
export async function listJobs(q: PgQueue, params: ListJobsParams): Promise<JobListing> {
  if (params.id !== undefined) return listById((p) => getJob(q, p), { ...params, id: params.id });
  const statement = LISTING[params.state];
  const after = decodeCursor(params, 2) as [string, number] | null;
  const afterSeq = after === null ? null : after[1];
  const sql = statement[params.order][after ? "after" : "first"];
  type Row = ListedRow & { cursor_at: string | null; cursor_seq: string | number | null; edge_at: string | null; edge_seq: string | number | null; scanned: string | number };
  const dbState = params.state === ListState.ready || params.state === ListState.scheduled ? JobState.ready : params.state;
  const rows = await q.run("listJobs", () =>
    q.reader.query<Row>(sql, [q.queue, dbState, params.task ?? null, params.tenantId ?? null, after?.[0] ?? null, afterSeq, LIST_WINDOW, params.limit]),
  );
  const page = rows.filter((row) => row.id !== null);
  const summary = rows[0];
  const last = page.at(-1);
  const cursorOf = (at: string, seq: string | number | null) => encodeCursor(params, [at, seq === null ? 0 : Number(seq)]);
  let next: string | null = null;
  if (page.length >= params.limit && last) next = cursorOf(last.cursor_at!, last.cursor_seq);
  else if (summary && Number(summary.scanned) >= LIST_WINDOW && summary.edge_at !== null) next = cursorOf(summary.edge_at, summary.edge_seq);
  return { rows: page.map(rowToInfo), next, exact: true };
}

export async function runNow(q: PgQueue, { id }: { id: string }): Promise<JobActionResult> {
  const rows = await q.run("runNow", () => q.db.query(SQL.runNow, [q.queue, id, q.channel]));
  if (rows.length > 0) return { done: true, state: JobState.ready };
  return { done: false, state: (await getJob(q, { id }))?.state ?? null };
}

/** One UPDATE … WHERE state = 'ready': the job's payload, priority or run time, or nothing when it moved on. */
export async function updateJob(q: PgQueue, params: JobUpdate): Promise<JobActionResult> {
  const payload = params.payload === undefined ? null : JSON.stringify(params.payload);
  const values = [q.queue, params.id, payload, params.priority ?? null, params.availableAt?.toISOString() ?? null, q.channel];
  const rows = await q.run("updateJob", () => q.db.query(SQL.updateJob, values));
  if (rows.length > 0) return { done: true, state: JobState.ready };
  return { done: false, state: (await getJob(q, { id: params.id }))?.state ?? null };
}

export async function deleteJob(q: PgQueue, { id }: { id: string }): Promise<JobActionResult> {
  const rows = await q.run("deleteJob", () => q.db.query(SQL.deleteJob, [q.queue, id]));
  if (rows.length > 0) return { done: true, state: null };
  return { done: false, state: (await getJob(q, { id }))?.state ?? null };
}

export async function depths(q: PgQueue): Promise<Depths> {
  type Row = Record<"ready" | "scheduled" | "running" | "dead", string | number> & { more: boolean; due_capped: boolean; scheduled_capped: boolean };
  const [row] = await readingRunning(
    (read) => q.run("depths", () => q.reader.query<Row>(SQL.depths, [q.queue, read, EXACT_COUNT_MAX + 1])),
    (rows) => rows[0]?.more === true,
  );
  const counted: Depths = {
    ready: Number(row?.ready ?? 0),
    scheduled: Number(row?.scheduled ?? 0),
    running: Number(row?.running ?? 0),
    dead: Number(row?.dead ?? 0),
  };
  if (!row?.due_capped && !row?.scheduled_capped) return counted;
  const estimate = await estimateOpen(q);
  return {
    ...counted,
    ...(row.due_capped ? { ready: Math.max(counted.ready, estimate.due - counted.running) } : {}),
    ...(row.scheduled_capped ? { scheduled: Math.max(counted.scheduled, estimate.scheduled) } : {}),
    estimated: true,
  };
}

/** The queue's due and scheduled jobs estimated from a sample of jfast_jobs' pages (depths-estimate.sql). */
async function estimateOpen(q: PgQueue): Promise<{ due: number; scheduled: number }> {
  const [row] = await q.run("depths", () => q.reader.query<{ due: string | number; scheduled: string | number }>(SQL.depthsEstimate, [q.queue, ESTIMATE_PAGES]));
  return { due: Number(row?.due ?? 0), scheduled: Number(row?.scheduled ?? 0) };
}

export async function depthsByTask(q: PgQueue, params: { tenantId?: string | undefined } = {}): Promise<TaskDepths> {
  type Row = {
    task: string | null;
    ready: string | number;
    scheduled: string | number;
    running: string | number;
    dead: string | number;
    estimated: boolean | null;
    more: boolean | null;
    due_capped: boolean | null;
    scheduled_capped: boolean | null;
  };
  const rows = await readingRunning(
    (read) => q.run("depthsByTask", () => q.reader.query<Row>(SQL.depthsByTask, [q.queue, params.tenantId ?? null, TASK_SPLIT_READ, read, EXACT_COUNT_MAX + 1])),
    (result) => result.some((r) => r.task === null && r.more === true),
  );
  const summary = rows.find((r) => r.task === null);
  // A capped state was split over the jobs counted (EXACT_COUNT_MAX + 1 due entries, less the running ones); its
  // shares scale to the estimate of the whole state.
  let readyScale = 1;
  let scheduledScale = 1;
  if (summary?.due_capped || summary?.scheduled_capped) {
    const estimate = await estimateOpen(q);
    const running = Number(summary.running);
    const countedReady = EXACT_COUNT_MAX + 1 - running;
    if (summary.due_capped && countedReady > 0) readyScale = Math.max(1, (estimate.due - running) / countedReady);
    if (summary.scheduled_capped) scheduledScale = Math.max(1, estimate.scheduled / (EXACT_COUNT_MAX + 1));
  }
  const tasks: Record<string, Depths> = {};
  for (const row of rows) {
    if (row.task === null) continue;
    tasks[row.task] = {
      ready: Math.round(Number(row.ready) * readyScale),
      scheduled: Math.round(Number(row.scheduled) * scheduledScale),
      running: Number(row.running),
      dead: Number(row.dead),
    };
  }
  return { tasks, exact: summary?.estimated !== true && readyScale === 1 && scheduledScale === 1 };
}

export async function listDead(q: PgQueue, { limit, offset = 0 }: { limit: number; offset?: number }): Promise<DeadJob[]> {
  const rows = await q.run("listDead", () =>
    q.reader.query<JobRow & { died_at: Date | string }>(SQL.listDead, [q.queue, limit, offset]),
  );
  return rows.map((row) => {
    const job = rowToJson(row);
    return { job, diedAt: toIso(row.died_at), lastError: job.errors.at(-1) ?? null };
  });
}

/** Through the GIN index on dead rows' payload (migration 0012, search-dead.sql); keyset pages by (died_at, seq). */
export async function searchDead(q: PgQueue, params: DeadSearch): Promise<{ rows: DeadJob[]; next: string | null }> {
  const containment = params.payload.path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), params.payload.equals);
  const [afterAt, afterSeq] = params.after ? splitCursor(params.after) : [null, null];
  const rows = await q.run("searchDead", () =>
    q.reader.query<JobRow & { died_at: Date | string; cursor_at: string }>(SQL.searchDead, [
      q.queue,
      JSON.stringify(containment),
      params.task ?? null,
      params.tenantId ?? null,
      afterAt,
      afterSeq,
      params.limit + 1,
    ]),
  );
  const page = rows.slice(0, params.limit);
  const last = page.at(-1);
  return {
    rows: page.map((row) => {
      const job = rowToJson(row);
      return { job, diedAt: toIso(row.died_at), lastError: job.errors.at(-1) ?? null };
    }),
    next: rows.length > params.limit && last ? `${last.cursor_at}|${last.seq}` : null,
  };
}

export async function retryDead(q: PgQueue, params: RetryDeadParams): Promise<{ retried: string[]; missing: string[] }> {
  if ("all" in params) {
    const rows = await q.run("retryDead", () => q.db.query<{ id: string }>(SQL.retryDeadAll, [q.queue, q.channel]));
    return { retried: rows.map((r) => r.id), missing: [] };
  }
  const rows = await q.run("retryDead", () => q.db.query<{ id: string }>(SQL.retryDead, [q.queue, params.ids, q.channel]));
  return splitFound(params.ids, rows, "retried");
}

export async function discardDead(q: PgQueue, params: RetryDeadParams): Promise<{ discarded: string[]; missing: string[] }> {
  if ("all" in params) {
    const rows = await q.run("discardDead", () => q.db.query<{ id: string }>(SQL.discardDeadAll, [q.queue]));
    return { discarded: rows.map((r) => r.id), missing: [] };
  }
  const rows = await q.run("discardDead", () => q.db.query<{ id: string }>(SQL.discardDead, [q.queue, params.ids]));
  return splitFound(params.ids, rows, "discarded");
}

/** `jfast keys rotate`: waiting jobs and dead letters re-encrypted in place (core/stored-rewrite.ts). */
export function rewriteStored(q: PgQueue, params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<StoredRewriteResult> {
  return rewriteStoredJobs({ db: q.db, queue: q.queue, rewrite: params.rewrite });
}

type ListedRow = JobRow & {
  state: JobState;
  locked_by: string | null;
  locked_until: Date | string | null;
  died_at: Date | string | null;
  /** get-job.sql only: the result (null both for none and for a stored null, hence has_result) and why none. */
  result?: unknown;
  has_result?: boolean;
  result_omitted?: string | null;
  /** get-job.sql only: the attempts' records and the running job's progress (core/job-life.ts). */
  runs?: AttemptRun[] | null;
  progress?: JobProgress | null;
  /** The listings' (list-*.sql): the last attempt's record only. */
  last_run?: AttemptRun | null;
};

function rowToInfo(row: ListedRow): JobInfo {
  const info: JobInfo = {
    job: rowToJson(row),
    state: row.state,
    lockedBy: row.locked_by,
    lockedUntil: toIsoOrNull(row.locked_until),
    diedAt: toIsoOrNull(row.died_at),
  };
  if (row.has_result) info.result = row.result;
  if (row.result_omitted) info.resultOmitted = row.result_omitted;
  if (row.runs !== undefined || row.last_run !== undefined) {
    const runs = row.runs !== undefined ? row.runs : row.last_run ? [row.last_run] : null;
    const life = jobLifeFields({ runs, errors: info.job.errors, createdAt: info.job.createdAt, running: row.state === JobState.running, progress: row.progress });
    if (row.runs !== undefined) Object.assign(info, life);
    else {
      // A listing reads the last attempt only: its timing and progress, not a partial list of attempts.
      const { attempts: _attempts, logs: _logs, ...timing } = life;
      Object.assign(info, timing);
    }
  }
  return info;
}

/** The statement listing each state; its $2 is the stored state (a scheduled job is stored ready). */
const LISTING: Record<ListState, ListingSql> = {
  ready: SQL.listDue,
  running: SQL.listDue,
  scheduled: SQL.listScheduled,
  dead: SQL.listDeadPage,
  completed: SQL.listFinished,
  cancelled: SQL.listFinished,
  expired: SQL.listFinished,
};

/** Runs a depth statement reading RUNNING_READ due rows for the running jobs, ten times deeper while it says `more`. */
async function readingRunning<T>(query: (read: number) => Promise<T>, more: (result: T) => boolean): Promise<T> {
  for (let read = RUNNING_READ; ; read *= 10) {
    const result = await query(read);
    if (!more(result) || read >= RUNNING_READ_MAX) return result;
  }
}

function splitCursor(cursor: string): [string, string] {
  const bar = cursor.lastIndexOf("|");
  const at = cursor.slice(0, bar);
  const seq = cursor.slice(bar + 1);
  // The timestamptz as PostgreSQL prints it: 2026-11-29 22:38:49.77506+00
  if (bar <= 0 || !/^\d+$/.test(seq) || !/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2}){0,2})?$/.test(at)) {
    throw new BackendError(`not a dead-letter search cursor: "${cursor.slice(0, 80)}"`, {
      code: "CURSOR_INVALID",
      hint: "pass back the nextCursor of the previous page unchanged",
      docs: "jfast docs admin-api#job-search",
    });
  }
  return [at, seq];
}

function splitFound<K extends string>(ids: string[], rows: Array<{ id: string }>, key: K): { [P in K]: string[] } & { missing: string[] } {
  const found = new Set(rows.map((r) => r.id));
  return {
    [key]: ids.filter((id) => found.has(id)),
    missing: ids.filter((id) => !found.has(id)),
  } as { [P in K]: string[] } & { missing: string[] };
}
