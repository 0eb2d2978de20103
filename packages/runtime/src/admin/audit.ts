import { randomUUID } from "node:crypto";
import type { Logger } from "../observability/logger.js";
import type { ActorRole } from "./tokens.js";

/** One admin mutation: who did what, when, to which ids, and what came of it. */
export interface AuditEntry {
  id: string;
  at: string;
  /** The token's name, or the person a dashboard forwarded. */
  actor: string;
  /** The token's role, or the person's role in the dashboard (viewer, operator, admin). */
  role: ActorRole;
  /** The dashboard's token that forwarded the person; null for a call made with the caller's own token. */
  via: string | null;
  action: string;
  /** The ids the caller named or the filter selected (capped at AUDIT_MAX_IDS; `count` is the full number). */
  ids: string[];
  count: number;
  filter: Record<string, unknown> | null;
  outcome: Record<string, unknown>;
}

export type AuditInput = Omit<AuditEntry, "id" | "at">;

/** The outcome of an entry written before its action ran and not finished yet (in flight, or its process died). */
export const PENDING = { pending: true } as const;

/** An entry written before its action: `finish` records what came of it, once. */
export interface AuditTicket {
  readonly entry: AuditEntry;
  finish(params: { outcome: Record<string, unknown>; ids?: string[] | undefined }): Promise<AuditEntry>;
}

export interface AuditLog {
  readonly kind: "memory" | "sql";
  /** One finished entry (what a background replay did when it ended). */
  record(entry: AuditInput): Promise<AuditEntry>;
  /** Writes the entry with a pending outcome before the action runs; when this fails the action must not run. */
  begin(entry: Omit<AuditInput, "outcome">): Promise<AuditTicket>;
  /** Newest first; with `tenant`, only entries whose filter names that tenant. */
  list(params: { limit: number; before?: string | undefined; tenant?: string | undefined }): Promise<AuditEntry[]>;
  /** Entries of these actions naming the job id, written at or after `since` (the job's creation), newest first. */
  forJob(params: { id: string; since: string; actions: readonly string[]; limit: number }): Promise<AuditEntry[]>;
}

/** A bulk retry of a million rows must not write a million ids into one audit row. */
export const AUDIT_MAX_IDS = 1000;

const MEMORY_KEEP = 1000;

/**
 * Keeps the last entries in process memory and writes each as a log line, which is the durable copy when the
 * service has no database (log shipping keeps it). Entries are lost on restart: see docs/admin-api.md.
 */
export function createMemoryAuditLog(params: { logger: Logger }): AuditLog {
  const entries: AuditEntry[] = [];
  return {
    kind: "memory",
    async record(input) {
      const entry = complete(input);
      entries.push(entry);
      if (entries.length > MEMORY_KEEP) entries.splice(0, entries.length - MEMORY_KEEP);
      params.logger.info("admin action", { audit: entry });
      return entry;
    },
    async begin(input) {
      const entry = complete({ ...input, outcome: { ...PENDING } });
      entries.push(entry);
      if (entries.length > MEMORY_KEEP) entries.splice(0, entries.length - MEMORY_KEEP);
      return {
        entry,
        async finish({ outcome, ids }) {
          if (ids) Object.assign(entry, { ids: ids.slice(0, AUDIT_MAX_IDS), count: ids.length });
          entry.outcome = outcome;
          params.logger.info("admin action", { audit: entry });
          return entry;
        },
      };
    },
    async list({ limit, before, tenant }) {
      const newestFirst = [...entries].reverse().filter((e) => !tenant || namesTenant(e.filter, tenant) || e.id === before);
      const start = before ? newestFirst.findIndex((e) => e.id === before) + 1 : 0;
      return newestFirst.slice(start, start + limit);
    },
    async forJob({ id, since, actions, limit }) {
      return [...entries]
        .reverse()
        .filter((e) => e.at >= since && actions.includes(e.action) && e.ids.includes(id))
        .slice(0, limit);
    },
  };
}

function namesTenant(filter: Record<string, unknown> | null, tenant: string): boolean {
  return filter?.tenantId === tenant || filter?.tenant === tenant;
}

export function complete(input: AuditInput): AuditEntry {
  return { ...input, ids: input.ids.slice(0, AUDIT_MAX_IDS), id: randomUUID(), at: new Date().toISOString() };
}
