import { DEFAULT_PRIORITY, Job, type AttemptError, type JobJSON } from "../../core/job.js";
import type { JobFlow } from "../../core/flow.js";
import type { StoredResult } from "../../core/result.js";
import type { JobUnique } from "../../core/unique.js";

/** A jfast_jobs row as the drivers hand it back (pg: int8 as string, timestamps as Date; PGlite: numbers). */
export interface JobRow {
  id: string;
  seq: string | number;
  task: string;
  /** Absent from statements that do not select it (the job then shows the default). */
  priority?: number | undefined;
  payload: unknown;
  attempts: number;
  max_attempts: number | null;
  /** A Date or text from most statements; epoch milliseconds from claim.sql. */
  available_at: Date | string | number;
  created_at: Date | string | number;
  tenant_id: string | null;
  request_id: string | null;
  trace: JobJSON["trace"];
  errors: AttemptError[] | null;
  timeout_ms: string | number | null;
  /** A flow's step: its place in the flow (null for a plain job; absent from statements that do not select it). */
  flow?: JobFlow | null;
  /** Read by get-job.sql only (a unique job's option; null for the others). */
  unique_spec?: JobUnique | null;
  /** A job's deadline (docs/flow-control.md#deadlines): epoch ms from the claims, a Date from get-job.sql; null: none. */
  expires_at?: Date | string | number | null;
}

export function rowToJson(row: JobRow): JobJSON {
  const json: JobJSON = {
    id: row.id,
    task: row.task,
    priority: row.priority ?? DEFAULT_PRIORITY,
    payload: row.payload,
    attempts: Number(row.attempts),
    maxAttempts: row.max_attempts === null ? null : Number(row.max_attempts),
    availableAt: toIso(row.available_at),
    createdAt: toIso(row.created_at),
    tenantId: row.tenant_id,
    requestId: row.request_id,
    trace: row.trace ?? null,
    errors: row.errors ?? [],
    timeoutMs: row.timeout_ms === null ? null : Number(row.timeout_ms),
  };
  if (row.unique_spec) json.unique = row.unique_spec;
  if (row.flow) json.flow = row.flow;
  if (row.expires_at !== null && row.expires_at !== undefined) json.expiresAt = toIso(row.expires_at);
  return json;
}

/** A claimed row as a Job, straight from the driver's values (no JSON round trip: claims return hundreds). */
export function rowToJob(row: JobRow): Job {
  return Job.restore({
    id: row.id,
    task: row.task,
    priority: row.priority ?? DEFAULT_PRIORITY,
    payload: row.payload,
    attempts: Number(row.attempts),
    maxAttempts: row.max_attempts === null ? null : Number(row.max_attempts),
    availableAt: toDate(row.available_at),
    createdAt: toDate(row.created_at),
    tenantId: row.tenant_id,
    requestId: row.request_id,
    trace: row.trace ?? null,
    errors: row.errors ?? [],
    timeoutMs: row.timeout_ms === null ? null : Number(row.timeout_ms),
    flow: row.flow ?? undefined,
    expiresAt: row.expires_at === null || row.expires_at === undefined ? undefined : toIso(row.expires_at),
  });
}

function toDate(value: Date | string | number): Date {
  if (value instanceof Date) return value;
  // PostgreSQL's 'infinity' and '-infinity' (a row written by hand): the latest and earliest time a Date holds,
  // so that a job with one is due (or not) as its row says, and can be shown, instead of an Invalid Date.
  const infinite = typeof value === "number" ? value : Number(value);
  if (infinite === Infinity) return new Date(DATE_LIMIT_MS);
  if (infinite === -Infinity) return new Date(-DATE_LIMIT_MS);
  return new Date(value);
}

const DATE_LIMIT_MS = 8.64e15;

export function toIso(value: Date | string | number): string {
  return toDate(value).toISOString();
}

export function toIsoOrNull(value: Date | string | number | null | undefined): string | null {
  return value === null || value === undefined ? null : toIso(value);
}

/**
 * The enqueue statement's parameters ($3 to $17 of enqueue.sql): one array per column, read from the jobs'
 * fields directly. JSON columns travel as text so both drivers send them the same way (node-postgres would turn
 * a JS array into a PostgreSQL array); times as epoch milliseconds; no errors as null (see enqueue.sql). Each
 * column is sent as a PostgreSQL array literal built here: node-postgres's own conversion runs two regular
 * expressions over every element, which was a tenth of a bulk enqueue's time in Node.
 *
 * A column that says nothing row by row is sent as NULL instead of an array, which the statement reads as
 * "the same for every row": all null (tenant, request, trace, errors, timeout), all zero (attempts), every
 * `createdAt` equal to its `availableAt` (a job due at once), every priority the default, every task or every max attempts the same (then
 * that value follows the columns, else NULL). Parsing those arrays was a fifth of the database's time
 * per row in a bulk enqueue of new jobs, and building them a part of this process's.
 */
export function jobsToColumns(jobs: readonly Job[]): Array<string | null> {
  const n = jobs.length;
  const ids = new Array<string>(n);
  const tasks = new Array<string>(n);
  const payloads = new Array<string>(n);
  const attempts = new Array<number>(n);
  const maxAttempts = new Array<number | null>(n);
  const availableAt = new Array<number>(n);
  const createdAt = new Array<number>(n);
  const tenants = new Array<string | null>(n);
  const requests = new Array<string | null>(n);
  const traces = new Array<string | null>(n);
  const errors = new Array<string | null>(n);
  const timeouts = new Array<number | null>(n);
  const priorities = new Array<number>(n);
  const oneTask = n > 0 ? jobs[0]!.task : null;
  const oneMaxAttempts = n > 0 ? jobs[0]!.maxAttempts : null;
  // Which columns vary from the "same for every row" value the statement fills in.
  let taskVaries = false;
  let attemptsVary = false;
  let maxAttemptsVary = false;
  let createdVaries = false;
  let tenantsVary = false;
  let requestsVary = false;
  let tracesVary = false;
  let errorsVary = false;
  let timeoutsVary = false;
  let prioritiesVary = false;
  for (let i = 0; i < n; i++) {
    const job = jobs[i]!;
    ids[i] = job.id;
    tasks[i] = job.task;
    payloads[i] = JSON.stringify(job.payload);
    attempts[i] = job.attempts;
    maxAttempts[i] = job.maxAttempts;
    availableAt[i] = job.availableAt.getTime();
    createdAt[i] = job.createdAt.getTime();
    tenants[i] = job.tenantId;
    requests[i] = job.requestId;
    traces[i] = job.trace === null ? null : JSON.stringify(job.trace);
    errors[i] = job.errors.length === 0 ? null : jsonbText(job.errors);
    timeouts[i] = job.timeoutMs;
    priorities[i] = job.priority;
    if (job.task !== oneTask) taskVaries = true;
    if (job.attempts !== 0) attemptsVary = true;
    if (job.maxAttempts !== oneMaxAttempts) maxAttemptsVary = true;
    if (createdAt[i] !== availableAt[i]) createdVaries = true;
    if (job.tenantId !== null) tenantsVary = true;
    if (job.requestId !== null) requestsVary = true;
    if (job.trace !== null) tracesVary = true;
    if (job.errors.length !== 0) errorsVary = true;
    if (job.timeoutMs !== null) timeoutsVary = true;
    if (job.priority !== DEFAULT_PRIORITY) prioritiesVary = true;
  }
  return [
    textArray(ids),
    taskVaries ? textArray(tasks) : null,
    textArray(payloads),
    attemptsVary ? numberArray(attempts) : null,
    maxAttemptsVary ? numberArray(maxAttempts) : null,
    numberArray(availableAt),
    createdVaries ? numberArray(createdAt) : null,
    tenantsVary ? textArray(tenants) : null,
    requestsVary ? textArray(requests) : null,
    tracesVary ? textArray(traces) : null,
    errorsVary ? textArray(errors) : null,
    timeoutsVary ? numberArray(timeouts) : null,
    taskVaries ? null : oneTask,
    maxAttemptsVary || oneMaxAttempts === null ? null : String(oneMaxAttempts),
    prioritiesVary ? numberArray(priorities) : null,
  ];
}

/**
 * A PostgreSQL array literal of text values, null as NULL: `{"a","b \"quoted\"",NULL}`. Every element is
 * quoted (so `NULL`, empty strings, braces and commas stay text), with `"` and `\` escaped by a backslash.
 */
export function textArray(values: readonly (string | null)[]): string {
  let literal = "{";
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (i > 0) literal += ",";
    if (value === null || value === undefined) literal += "NULL";
    else if (value.indexOf('"') === -1 && value.indexOf("\\") === -1) literal += `"${value}"`;
    else literal += `"${value.replace(/["\\]/g, "\\$&")}"`;
  }
  return `${literal}}`;
}

/** A PostgreSQL array literal of finite numbers, null as NULL. */
export function numberArray(values: readonly (number | null)[]): string {
  // Joined, not grown value by value: grown, V8 could optimize it before a rarer value (a NULL, a fraction) reached
  // its `+=`, and throw the code away when one did (27 times over one fresh worker's first two drains, once).
  // Read by index, holes included: a sparse array's hole is NULL (map would skip it).
  const texts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) texts[i] = numberText(values[i]);
  return `{${texts.join(",")}}`;
}

function numberText(value: number | null | undefined): string {
  return value === null || value === undefined ? "NULL" : String(value);
}

/**
 * jsonb cannot hold the NUL character nor half of a surrogate pair; an error message carrying one (a binary
 * protocol's message, say) would make recording the failure itself fail. Each is replaced by U+FFFD, the
 * replacement character. JSON.stringify writes both as escapes (a valid pair is written as it is).
 */
export function jsonbText(value: unknown): string {
  // An escape is `\uXXXX` preceded by an even number of backslashes (an odd one escapes the backslash).
  return JSON.stringify(value).replace(/(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi, "$1\\ufffd");
}

/**
 * complete-results.sql's $3 and $4: each job's result as JSON (jsonbText: no NUL jsonb refuses), and why a result
 * was not stored; NULL where a job has neither.
 */
export function resultArrays(results: ReadonlyArray<StoredResult | undefined>): [string, string] {
  const values: Array<string | null> = [];
  const omitted: Array<string | null> = [];
  for (const result of results) {
    values.push(result && "value" in result ? jsonbText(result.value) : null);
    omitted.push(result && "omitted" in result ? result.omitted.replaceAll("\u0000", "\ufffd") : null);
  }
  return [textArray(values), textArray(omitted)];
}
