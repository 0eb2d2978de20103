import { Job, type AttemptError, type JobJSON } from "../../core/job.js";

/** A jfast_jobs row as the drivers hand it back (pg: int8 as string, timestamps as Date; PGlite: numbers). */
export interface JobRow {
  id: string;
  seq: string | number;
  task: string;
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
}

export function rowToJson(row: JobRow): JobJSON {
  return {
    id: row.id,
    task: row.task,
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
}

/** A claimed row as a Job, straight from the driver's values (no JSON round trip: claims return hundreds). */
export function rowToJob(row: JobRow): Job {
  return Job.restore({
    id: row.id,
    task: row.task,
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
  });
}

function toDate(value: Date | string | number): Date {
  return value instanceof Date ? value : new Date(value);
}

export function toIso(value: Date | string | number): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export function toIsoOrNull(value: Date | string | number | null | undefined): string | null {
  return value === null || value === undefined ? null : toIso(value);
}

/**
 * The enqueue statement's parameters: one array per column, read from the jobs' fields directly. JSON columns
 * travel as text so both drivers send them the same way (node-postgres would turn a JS array into a
 * PostgreSQL array); times as epoch milliseconds; no errors as null (see enqueue.sql). Each column is sent
 * as a PostgreSQL array literal built here: node-postgres's own conversion runs two regular expressions over
 * every element, which was a tenth of a bulk enqueue's time in Node.
 */
export function jobsToColumns(jobs: readonly Job[]): string[] {
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
  }
  return [
    textArray(ids), textArray(tasks), textArray(payloads), numberArray(attempts), numberArray(maxAttempts),
    numberArray(availableAt), numberArray(createdAt), textArray(tenants), textArray(requests), textArray(traces),
    textArray(errors), numberArray(timeouts),
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
  let literal = "{";
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (i > 0) literal += ",";
    literal += value === null || value === undefined ? "NULL" : String(value);
  }
  return `${literal}}`;
}

/**
 * jsonb cannot hold the NUL character; an error message carrying one (a binary protocol's message, say)
 * would make recording the failure itself fail. It is replaced by U+FFFD, the replacement character.
 */
export function jsonbText(value: unknown): string {
  // An escape is `\u0000` preceded by an even number of backslashes (an odd one escapes the backslash).
  return JSON.stringify(value).replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1\\ufffd");
}
