import type { AttemptError } from "../core/job.js";
import type { SqlExecutor } from "../core/sql-port.js";
import { SQL } from "./load-sql.js";

/** What a relayed row carries: a job or a whole flow (its plan) for a queue backend, or an event for a Kafka topic. */
export const OutboxKind = { job: "job", event: "event", flow: "flow" } as const;
export type OutboxKind = (typeof OutboxKind)[keyof typeof OutboxKind];

/** One row to write: `id` is the job's or the event's own id; the row id adds kind and destination. */
export interface OutboxWrite {
  kind: OutboxKind;
  /** The queue name for a job, the topic for an event. */
  destination: string;
  id: string;
  /** JobJSON or EventJSON: the exact wire form the relay hands to the destination. */
  body: unknown;
}

/**
 * `<kind>:<destination>:<id>`. The same job id for the same queue (or the same event for the same topic) is
 * one row, so writing it again is a no-op while the row is pending, dead or delivered within the retention.
 * Queue names and topics cannot hold ":", so the first two colons split the parts back.
 */
export function outboxRowId(kind: OutboxKind, destination: string, id: string): string {
  return `${kind}:${destination}:${id}`;
}

/** Writes rows through the caller's executor (their open transaction); returns the row ids inserted now. */
export async function writeOutboxRows(params: {
  executor: SqlExecutor;
  rows: readonly OutboxWrite[];
  maxAttempts: number;
  channel: string;
}): Promise<Set<string>> {
  const { rows } = params;
  if (rows.length === 0) return new Set();
  const ids = rows.map((r) => outboxRowId(r.kind, r.destination, r.id));
  const inserted = await params.executor.query<{ id: string }>(SQL.insert, [
    ids,
    rows.map((r) => r.kind),
    rows.map((r) => r.destination),
    // As text: both drivers then send json the same way (node-postgres would turn an array into a PG array).
    rows.map((r) => JSON.stringify(r.body)),
    params.maxAttempts,
    params.channel,
    rows.map((r) => tenantOf(r.body)),
  ]);
  return new Set(inserted.map((r) => r.id));
}

/** The tenant a row is shared under by the relay (claim.sql): jobs, flows and events all carry `tenantId`; '' for none. */
function tenantOf(body: unknown): string {
  const tenant = (body as { tenantId?: unknown } | null)?.tenantId;
  return typeof tenant === "string" ? tenant : "";
}

/** A row as the relay claimed it. */
export interface ClaimedRow {
  id: string;
  seq: number;
  kind: OutboxKind;
  destination: string;
  /** The body as JSON text (decoded by the relay, so a broken body fails that row only). */
  body: string;
  /** Attempts including this one. */
  attempts: number;
  maxAttempts: number;
  createdAt: string;
  /** The relay whose earlier claim was never settled, if any. */
  previousClaim: string | null;
}

export interface ClaimRowRaw {
  id: string;
  seq: string | number;
  kind: OutboxKind;
  destination: string;
  body: string;
  attempts: number | string;
  max_attempts: number | string;
  created_at: Date | string;
  previous_claim: string | null;
}

export function claimedRow(raw: ClaimRowRaw): ClaimedRow {
  return {
    id: raw.id,
    seq: Number(raw.seq),
    kind: raw.kind,
    destination: raw.destination,
    body: raw.body,
    attempts: Number(raw.attempts),
    maxAttempts: Number(raw.max_attempts),
    createdAt: toIso(raw.created_at),
    previousClaim: raw.previous_claim,
  };
}

/** A row as a request's timeline shows it (docs/admin-api.md#timeline): where it went and when, not what it carried. */
export interface RequestOutboxRow {
  id: string;
  kind: OutboxKind;
  destination: string;
  state: "pending" | "delivered" | "dead";
  attempts: number;
  createdAt: string;
  deliveredAt: string | null;
  diedAt: string | null;
  /** The job's, event's or flow's own id. */
  bodyId: string | null;
  /** An event row's type. */
  eventType: string | null;
}

export function requestRow(raw: {
  id: string;
  kind: OutboxKind;
  destination: string;
  state: RequestOutboxRow["state"];
  attempts: number | string;
  created_at: Date | string;
  delivered_at: Date | string | null;
  died_at: Date | string | null;
  body_id: string | null;
  event_type: string | null;
}): RequestOutboxRow {
  return {
    id: raw.id,
    kind: raw.kind,
    destination: raw.destination,
    state: raw.state,
    ...rowLife(raw),
    bodyId: raw.body_id,
    eventType: raw.event_type,
  };
}

/** A row's attempts and the times it was written, delivered and given up on, as the row readers of this file show them. */
function rowLife(raw: { attempts: number | string; created_at: Date | string; delivered_at: Date | string | null; died_at: Date | string | null }) {
  return {
    attempts: Number(raw.attempts),
    createdAt: toIso(raw.created_at),
    deliveredAt: raw.delivered_at === null ? null : toIso(raw.delivered_at),
    diedAt: raw.died_at === null ? null : toIso(raw.died_at),
  };
}

/** An event row as a promise rule reads it (docs/alerts.md#promises). */
export interface EventOutboxRow {
  id: string;
  /** The topic. */
  destination: string;
  state: "pending" | "delivered" | "dead";
  attempts: number;
  createdAt: string;
  deliveredAt: string | null;
  diedAt: string | null;
  eventId: string;
  requestId: string;
  /** The last error the relay recorded, `Class: message`; null when none. */
  lastError: string | null;
}

export function eventRow(raw: {
  id: string;
  destination: string;
  state: EventOutboxRow["state"];
  attempts: number | string;
  created_at: Date | string;
  delivered_at: Date | string | null;
  died_at: Date | string | null;
  event_id: string;
  request_id: string;
  last_error: { class?: unknown; message?: unknown } | string | null;
}): EventOutboxRow {
  const error = typeof raw.last_error === "string" ? (JSON.parse(raw.last_error) as { class?: unknown; message?: unknown } | null) : raw.last_error;
  return {
    id: raw.id,
    destination: raw.destination,
    state: raw.state,
    ...rowLife(raw),
    eventId: raw.event_id,
    requestId: raw.request_id,
    lastError: error && typeof error.message === "string" ? `${typeof error.class === "string" ? error.class : "Error"}: ${error.message}` : null,
  };
}

/** A dead row as `jfast outbox dead` and the admin API show it. */
export interface DeadOutboxRow {
  id: string;
  kind: OutboxKind;
  destination: string;
  body: unknown;
  attempts: number;
  maxAttempts: number;
  createdAt: string;
  diedAt: string;
  /** The error that killed it (the last one recorded). */
  lastError: AttemptError | null;
  errors: AttemptError[];
}

export function deadRow(raw: ClaimRowRaw & { died_at: Date | string; errors: AttemptError[] | string | null }): DeadOutboxRow {
  const errors = (typeof raw.errors === "string" ? JSON.parse(raw.errors) : (raw.errors ?? [])) as AttemptError[];
  let body: unknown;
  try {
    body = JSON.parse(raw.body);
  } catch {
    body = raw.body;
  }
  return {
    id: raw.id,
    kind: raw.kind,
    destination: raw.destination,
    body,
    attempts: Number(raw.attempts),
    maxAttempts: Number(raw.max_attempts),
    createdAt: toIso(raw.created_at),
    diedAt: toIso(raw.died_at),
    lastError: errors.at(-1) ?? null,
    errors,
  };
}

function toIso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
