import { randomUUID } from "node:crypto";
import type { Options } from "amqplib";
import { CorruptJob } from "../../core/corrupt-job.js";
import { DEFAULT_PRIORITY, Job, priorityProblem, type AttemptError, type JobJSON } from "../../core/job.js";
import { jobIdTime } from "../../core/job-id.js";
import type { AttemptRun } from "../../core/job-life.js";
import type { JobFlow } from "../../core/flow.js";
import type { JobUnique } from "../../core/unique.js";
import { assertStorable, assertStorableText, recordableText } from "../../core/storable.js";
import { Header } from "./names.js";

/**
 * The wire form of a job on RabbitMQ: persistent, its id in `message-id`, its task in `type`, and the rest of its
 * JobJSON as the UTF-8 JSON body, leaving out what the job has by default (see compactBody); jfast's headers
 * mirror what an operator wants to see in the broker's UI. decodeJob gives back the whole JobJSON.
 */
export interface Outgoing {
  content: Buffer;
  options: Options.Publish;
}

export interface EncodeExtras {
  /** Epoch ms; only for delays longer than the cascade (see Header.dueAt). */
  dueAt?: number;
  /** Epoch ms; only on dead letters. */
  diedAt?: number;
  /** Times the job snoozed; written when above 0 (see Header.snoozes). */
  snoozes?: number;
}

/**
 * Headers travel in one frame, which the broker caps (frame_max, 128 KiB by default): a dead letter's error
 * history in full (attempts × 8 KiB messages) could not be published at all, and the job never died. The body
 * keeps every error whole; the headers show the newest attempts, each cut to a line.
 */
const HEADER_ERROR_MAX = 1024;
const HEADER_ATTEMPT_MAX = 200;
const HEADER_ERRORS_MAX = 20;

/** A job's message, from the Job itself (a new job's enqueue: no ISO dates to make) or from its JobJSON. */
export function encodeJob(json: JobJSON | Job, extras: EncodeExtras = {}): Outgoing {
  const options: Options.Publish = {
    persistent: true,
    mandatory: true,
    contentType: "application/json",
    timestamp: Math.floor(Date.now() / 1000),
  };
  if (fitsProperty(json.id)) options.messageId = json.id;
  if (fitsProperty(json.task)) options.type = json.task;
  // The work queue is a priority queue (x-max-priority, topology.ts) where a higher number is delivered first;
  // a job's priority is the other way round (0 first). Every message carries one: the broker takes a message
  // without the property as its lowest priority, behind every default job.
  options.priority = messagePriority(json.priority);
  // A job's first publish (nothing spent, no long delay) carries no headers: the task is in `type` and the
  // attempts are 0. A header table costs the broker about as much as the rest of the message, and a bulk
  // enqueue is made of first publishes; headers are for the messages an operator inspects.
  if (json.attempts > 0 || extras.dueAt !== undefined || extras.diedAt !== undefined || (extras.snoozes ?? 0) > 0) {
    const headers: Record<string, unknown> = {
      [Header.attempts]: json.attempts,
      [Header.task]: json.task,
    };
    if (extras.dueAt !== undefined) headers[Header.dueAt] = extras.dueAt;
    if ((extras.snoozes ?? 0) > 0) headers[Header.snoozes] = extras.snoozes;
    if (extras.diedAt !== undefined) {
      const last = json.errors.at(-1);
      headers[Header.diedAt] = extras.diedAt;
      if (last) {
        headers[Header.lastError] = recordableText(`${last.class}: ${last.message}`, HEADER_ERROR_MAX);
        if (last.reason) headers[Header.lastReason] = last.reason;
      }
      headers[Header.errors] = json.errors.slice(-HEADER_ERRORS_MAX).map((e) => recordableText(`attempt ${e.attempt}: ${e.class}: ${e.message}`, HEADER_ATTEMPT_MAX));
    }
    options.headers = headers;
  }
  return { content: Buffer.from(JSON.stringify(compactBody(json))), options };
}

/**
 * The body of a job's message: its JobJSON without the id and the task (they travel in `message-id` and `type`)
 * and without the fields a job has by default (no attempts, no errors, null options, availableAt equal to
 * createdAt, createdAt equal to the time in its UUIDv7 id), which decodeJob fills in again. The broker's work per persistent message grows with the body: a
 * new job's body was 260 bytes of which 200 said nothing, and publishing it cost the broker up to twice what a
 * 50-byte one does (docs/rabbitmq.md#messages).
 */
export function compactBody(json: JobJSON | Job): Record<string, unknown> {
  const body: Record<string, unknown> = { payload: json.payload };
  if (json.priority !== DEFAULT_PRIORITY) body.priority = json.priority;
  if (!fitsProperty(json.id)) body.id = json.id;
  if (!fitsProperty(json.task)) body.task = json.task;
  if (json.attempts !== 0) body.attempts = json.attempts;
  if (json.maxAttempts !== null) body.maxAttempts = json.maxAttempts;
  if (json instanceof Job) {
    const createdAt = json.createdAt.getTime();
    if (json.availableAt.getTime() !== createdAt) body.availableAt = json.availableAt.toISOString();
    // A generated id (UUIDv7) carries the time the job was made: the 24-byte timestamp need not travel twice.
    if (jobIdTime(json.id) !== createdAt) body.createdAt = json.createdAt.toISOString();
  } else {
    if (json.availableAt !== json.createdAt) body.availableAt = json.availableAt;
    if (jobIdTime(json.id) !== Date.parse(json.createdAt)) body.createdAt = json.createdAt;
  }
  if (json.tenantId !== null) body.tenantId = json.tenantId;
  if (json.requestId !== null) body.requestId = json.requestId;
  if (json.trace !== null) body.trace = json.trace;
  if (json.errors.length > 0) body.errors = json.errors;
  if (json.timeoutMs !== null) body.timeoutMs = json.timeoutMs;
  if (json.unique) body.unique = json.unique;
  // A flow step's place in its flow: what its completion counts for (docs/rabbitmq.md#flows).
  if (json.flow) body.flow = json.flow;
  // A job's deadline (docs/flow-control.md#deadlines): the worker it is delivered to after it ends it unrun.
  if (json instanceof Job) {
    if (json.expiresAt !== null) body.expiresAt = json.expiresAt.toISOString();
  } else if (json.expiresAt !== undefined) body.expiresAt = json.expiresAt;
  // The attempts' records of a retried or dead job (progress.ts): a first publish has none.
  if (!(json instanceof Job) && json.runs && json.runs.length > 0) body.runs = json.runs;
  return body;
}

/** The highest AMQP priority a job's message carries: `x-max-priority` of the work queue (topology.ts). */
export const MAX_MESSAGE_PRIORITY = 9;

/** A job's priority (0 first … 9 last) as the AMQP `priority` property (9 delivered first … 0 last). */
export function messagePriority(priority: number): number {
  return MAX_MESSAGE_PRIORITY - priority;
}

/**
 * message-id and type are AMQP short strings, at most 255 bytes: an id or a task name longer than that cannot be
 * published in them at all (the publish fails, and a job that must die or retry never can), so it travels in the
 * body, which decodeJob reads first.
 */
function fitsProperty(text: string): boolean {
  return text.length <= 85 || Buffer.byteLength(text, "utf8") <= 255;
}

/** The message properties a job's id and task are read from when its body leaves them out. */
export interface CarriedProperties {
  messageId?: string | undefined;
  type?: string | undefined;
}

export type Decoded = { ok: true; json: JobJSON } | { ok: false; reason: string };

/**
 * Reads a job from a message body and its properties. Anything that is not a jfast job (not JSON, not an object,
 * wrong types) comes back as a reason instead of throwing, so one bad message can never stop a consumer.
 * Only `id` and `task` are required, from the body or else from `message-id` and `type`; the other fields take
 * the defaults a new Job would have (createdAt: the time in a UUIDv7 id, else availableAt, else now;
 * availableAt: createdAt), so a job published by hand from the
 * broker's UI (`{"id": "...", "task": "...", "payload": {...}}`) runs too.
 */
export function decodeJob(content: Buffer, properties: CarriedProperties = {}): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(content.toString("utf8"));
  } catch (error) {
    return { ok: false, reason: `the body is not JSON (${(error as Error).message})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, reason: `the body is JSON but not an object (${Array.isArray(value) ? "an array" : typeof value})` };
  }
  const v = value as Record<string, unknown>;
  const problems: string[] = [];
  if (v.id === undefined && typeof properties.messageId === "string" && properties.messageId !== "") v.id = properties.messageId;
  if (v.task === undefined && typeof properties.type === "string" && properties.type !== "") v.task = properties.type;
  const id = readString(v, "id", true, problems);
  const task = readString(v, "task", true, problems);
  const attempts = readNumber(v, "attempts", 0, problems);
  const priority = v.priority === undefined || v.priority === null ? DEFAULT_PRIORITY : v.priority;
  const badPriority = priorityProblem(priority);
  if (badPriority !== null) problems.push(`"priority": ${badPriority}`);
  const maxAttempts = readNumber(v, "maxAttempts", 1, problems);
  const timeoutMs = readNumber(v, "timeoutMs", 1, problems);
  const availableAt = readDate(v, "availableAt", problems);
  const createdAt = readDate(v, "createdAt", problems);
  const tenantId = readString(v, "tenantId", false, problems);
  const requestId = readString(v, "requestId", false, problems);
  const trace = readTrace(v.trace, problems);
  const errors = readErrors(v.errors, problems);
  if (attempts !== null && !Number.isInteger(attempts)) problems.push(`"attempts" must be a whole number`);
  if (problems.length > 0 || id === null || task === null) return { ok: false, reason: `not a jfast job: ${problems.join("; ")}` };
  const unstorable = storableProblem({ id, task, tenantId, requestId, payload: v.payload === undefined ? {} : v.payload });
  // What `new Job` refuses (NUL, half a surrogate pair...) could not be handed to a worker: set aside, not claimed.
  if (unstorable !== null) return { ok: false, reason: `not a jfast job: ${unstorable}` };
  const idTime = createdAt === null ? jobIdTime(id) : null;
  const created = createdAt ?? (idTime !== null ? new Date(idTime).toISOString() : null) ?? availableAt ?? new Date().toISOString();
  const json: JobJSON = {
    id,
    task,
    priority: priority as number,
    payload: v.payload === undefined ? {} : v.payload,
    attempts: attempts ?? 0,
    maxAttempts,
    availableAt: availableAt ?? created,
    createdAt: created,
    tenantId,
    requestId,
    trace,
    errors,
    timeoutMs,
  };
  // Its key is released when it ends (unique-stores.ts): a body written by hand without a well-formed one has none.
  const unique = v.unique as JobUnique | undefined;
  if (typeof unique === "object" && unique !== null && typeof unique.key === "string") json.unique = unique;
  const flow = v.flow as JobFlow | undefined;
  if (typeof flow === "object" && flow !== null && typeof flow.id === "string" && typeof flow.step === "string" && typeof flow.after === "object" && flow.after !== null) json.flow = flow;
  if (typeof v.expiresAt === "string" && !Number.isNaN(Date.parse(v.expiresAt))) json.expiresAt = v.expiresAt;
  // Attempts' records (progress.ts) are for people to read: a body without a well-formed list has none.
  if (Array.isArray(v.runs)) json.runs = (v.runs as unknown[]).filter((r): r is AttemptRun => typeof r === "object" && r !== null && typeof (r as AttemptRun).startedAt === "number");
  return { ok: true, json };
}

// decodeJob's readers: each pushes what is wrong with `key` onto `problems` and gives null for a missing or bad value.

function readString(v: Record<string, unknown>, key: string, required: boolean, problems: string[]): string | null {
  const x = v[key];
  if (x === undefined || x === null) {
    if (required) problems.push(`"${key}" is missing`);
    return null;
  }
  if (typeof x !== "string" || (required && x.length === 0)) {
    problems.push(`"${key}" must be a ${required ? "non-empty " : ""}string`);
    return null;
  }
  return x;
}

function readNumber(v: Record<string, unknown>, key: string, min: number, problems: string[]): number | null {
  const x = v[key];
  if (x === undefined || x === null) return null;
  if (typeof x !== "number" || !Number.isFinite(x) || x < min) {
    problems.push(`"${key}" must be a number ≥ ${min}`);
    return null;
  }
  return x;
}

function readDate(v: Record<string, unknown>, key: string, problems: string[]): string | null {
  const x = readString(v, key, false, problems);
  if (x !== null && Number.isNaN(Date.parse(x))) {
    problems.push(`"${key}" must be an ISO-8601 date`);
    return null;
  }
  return x;
}

function storableProblem(fields: { id: string; task: string; tenantId: string | null; requestId: string | null; payload: unknown }): string | null {
  try {
    assertStorableText(fields.id, "the id");
    assertStorableText(fields.task, "the task name");
    assertStorableText(fields.tenantId, "the tenant id");
    assertStorableText(fields.requestId, "the request id");
    assertStorable(fields.payload, "the payload");
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function readTrace(x: unknown, problems: string[]): JobJSON["trace"] {
  if (x === undefined || x === null) return null;
  const t = x as Record<string, unknown>;
  if (typeof x !== "object" || typeof t.traceparent !== "string" || (t.tracestate !== undefined && typeof t.tracestate !== "string")) {
    problems.push(`"trace" must be { traceparent, tracestate? }`);
    return null;
  }
  return t.tracestate === undefined ? { traceparent: t.traceparent } : { traceparent: t.traceparent, tracestate: t.tracestate as string };
}

function readErrors(x: unknown, problems: string[]): AttemptError[] {
  if (x === undefined || x === null) return [];
  if (!Array.isArray(x)) {
    problems.push(`"errors" must be an array`);
    return [];
  }
  for (const e of x) {
    const r = e as Record<string, unknown> | null;
    if (typeof r !== "object" || r === null || typeof r.class !== "string" || typeof r.message !== "string" || typeof r.attempt !== "number") {
      problems.push(`"errors" entries must be { attempt, at, class, message }`);
      break;
    }
  }
  return x as AttemptError[];
}

/**
 * A message that is not a job, turned into a dead job that carries the original untouched: the body (UTF-8
 * when it is valid UTF-8, else base64), where it was published and its headers. It is listed, discarded and
 * retried like any dead letter; retried, it dies again at once as an unknown task.
 */
export function unreadableJob(params: {
  content: Buffer;
  reason: string;
  queue: string;
  messageId?: string | undefined;
  /** Used when the message has no id; a stable one lets an operator retry or discard it by id. */
  fallbackId?: string | undefined;
  exchange: string;
  routingKey: string;
  headers?: Record<string, unknown> | undefined;
}): JobJSON {
  const now = new Date().toISOString();
  const utf8 = params.content.toString("utf8");
  const isUtf8 = Buffer.from(utf8, "utf8").equals(params.content);
  const error: AttemptError = {
    attempt: 1,
    at: now,
    class: CorruptJob.errorClass,
    message: `a message on queue "${params.queue}" is not a jfast job and was dead-lettered untouched: ${params.reason}`,
    reason: CorruptJob.reason,
  };
  return {
    id: params.messageId && params.messageId.length > 0 ? params.messageId : (params.fallbackId ?? `unreadable-${randomUUID()}`),
    task: CorruptJob.task,
    priority: DEFAULT_PRIORITY,
    payload: {
      body: isUtf8 ? utf8 : params.content.toString("base64"),
      encoding: isUtf8 ? "utf8" : "base64",
      exchange: params.exchange,
      routingKey: params.routingKey,
      headers: jsonSafe(params.headers ?? {}),
    },
    attempts: 1,
    maxAttempts: 1,
    availableAt: now,
    createdAt: now,
    tenantId: null,
    requestId: null,
    trace: null,
    errors: [error],
    timeoutMs: null,
  };
}

/** Header values can be Buffers or 64-bit numbers; keep what JSON can carry. */
function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value, (_k, x) => (typeof x === "bigint" ? x.toString() : x)));
  } catch {
    return {};
  }
}

/** Reads a numeric header written by us (amqplib may hand back numbers, or bigints for 64-bit values). */
export function numberHeader(headers: Record<string, unknown> | undefined, name: string): number | null {
  const x = headers?.[name];
  if (typeof x === "number" && Number.isFinite(x)) return x;
  if (typeof x === "bigint") return Number(x);
  if (typeof x === "string" && x.trim() !== "" && Number.isFinite(Number(x))) return Number(x);
  return null;
}
