import type { AlertRule } from "./config.js";
import type { PromiseHop } from "./promise.js";

export type AlertState = "firing" | "resolved";
export type DeliveryStatus = "pending" | "delivered" | "failed";

/** Where a rule stands now: what the last notification said, and when. */
export interface AlertStatus {
  name: string;
  state: AlertState;
  /** When it last changed state (epoch ms). */
  changedAt: number;
  value: number | null;
}

/** A rule made at run time (admin alerts.create), kept in the service's store. */
export interface StoredAlertRule {
  rule: AlertRule;
  updatedAt: number;
  updatedBy: string | null;
}

/** One change of state and its webhook delivery. */
export interface AlertEvent {
  id: string;
  alert: string;
  rule: AlertRule["rule"];
  state: AlertState;
  value: number | null;
  threshold: number;
  at: number;
  webhook: string;
  delivery: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  deliveredAt: number | null;
  /**
   * What the notification named, in one line (docs/alerts.md#history): a promise's late request and hop, a
   * kafka_lag rule's worst group/topic/partition; null for other rules and for a recovery.
   */
  detail: string | null;
  /** promise only: the broken request it names, the hop it is late at and the service it waits in. */
  example: { requestId: string; hop: PromiseHop; service: string } | null;
}

/** Longest detail kept; the request id and service are capped at ID_MAX. A store's row stays small. */
export const DETAIL_MAX = 500;
const ID_MAX = 200;

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The detail and example as every store keeps them: within their bounds. */
export function boundedDetail(params: Pick<AlertEvent, "detail" | "example">): Pick<AlertEvent, "detail" | "example"> {
  const { detail, example } = params;
  return {
    detail: detail === null ? null : cap(detail.replace(/\s+/g, " ").trim(), DETAIL_MAX),
    example: example === null ? null : { requestId: cap(example.requestId, ID_MAX), hop: example.hop, service: cap(example.service, ID_MAX) },
  };
}

/**
 * The service's alert store: PostgreSQL/PGlite (migration 0034) where the service has a database, else Redis
 * beside the Redis queue, else the process's memory (the memory queue). States and history are shared by every process of the service, and the
 * lease makes one of them the evaluator at a time.
 */
export interface AlertStore {
  readonly kind: "sql" | "redis" | "memory";
  /** Takes (or keeps) the evaluator's lease for ttlMs; true when this owner holds it now. */
  claimLease(params: { owner: string; ttlMs: number }): Promise<boolean>;
  releaseLease(params: { owner: string }): Promise<void>;
  rules(): Promise<StoredAlertRule[]>;
  /** create: only when no rule has the name (false: taken); else replaces it (false: none). */
  saveRule(params: { rule: AlertRule; create: boolean; by: string | null }): Promise<boolean>;
  deleteRule(params: { name: string }): Promise<boolean>;
  statuses(): Promise<Map<string, AlertStatus>>;
  setStatus(status: AlertStatus): Promise<void>;
  forgetStatus(params: { name: string }): Promise<void>;
  /** Appends a change of state; returns its id. */
  record(event: Omit<AlertEvent, "id">): Promise<string>;
  /** The outcome of its delivery so far. */
  updateDelivery(params: { id: string; delivery: DeliveryStatus; attempts: number; lastError: string | null; deliveredAt: number | null }): Promise<void>;
  /** Newest first. */
  history(params: { alert?: string | undefined; limit: number }): Promise<AlertEvent[]>;
  close(): Promise<void>;
}

export function createMemoryAlertStore(): AlertStore {
  let lease: { owner: string; until: number } | null = null;
  const rules = new Map<string, StoredAlertRule>();
  const statuses = new Map<string, AlertStatus>();
  const events: AlertEvent[] = [];
  let next = 1;
  return {
    kind: "memory",
    async claimLease({ owner, ttlMs }) {
      const now = Date.now();
      if (lease && lease.owner !== owner && lease.until > now) return false;
      lease = { owner, until: now + ttlMs };
      return true;
    },
    async releaseLease({ owner }) {
      if (lease?.owner === owner) lease = null;
    },
    async rules() {
      return [...rules.values()].map((r) => structuredClone(r));
    },
    async saveRule({ rule, create, by }) {
      if (create === rules.has(rule.name)) return false;
      rules.set(rule.name, { rule: structuredClone(rule), updatedAt: Date.now(), updatedBy: by });
      return true;
    },
    async deleteRule({ name }) {
      return rules.delete(name);
    },
    async statuses() {
      return new Map([...statuses].map(([k, v]) => [k, { ...v }]));
    },
    async setStatus(status) {
      statuses.set(status.name, { ...status });
    },
    async forgetStatus({ name }) {
      statuses.delete(name);
    },
    async record(event) {
      const id = String(next++);
      events.push({ ...event, ...boundedDetail(event), id });
      if (events.length > 10_000) events.splice(0, events.length - 10_000);
      return id;
    },
    async updateDelivery({ id, ...rest }) {
      const event = events.find((e) => e.id === id);
      if (event) Object.assign(event, rest);
    },
    async history({ alert, limit }) {
      return events
        .filter((e) => alert === undefined || e.alert === alert)
        .slice(-limit)
        .reverse()
        .map((e) => ({ ...e }));
    },
    async close() {},
  };
}
