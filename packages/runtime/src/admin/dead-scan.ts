import type { AttemptError } from "../core/job.js";
import type { DeadJob, QueueBackend } from "../core/queue-backend.js";
import type { Redaction } from "./redact.js";

/** Filters the dead-letter views accept. Every field narrows; none means "all dead letters". */
export interface DeadFilter {
  task?: string | undefined;
  tenantId?: string | undefined;
  /** Case-insensitive substring of the last error's class or message. */
  errorText?: string | undefined;
  /** An error group's key, as returned by `deadLetters.groups`. */
  group?: string | undefined;
  /** A payload field (object keys from the root) equal to a value of the same JSON type (jobs.search). */
  payload?: { path: string[]; equals: string | number | boolean } | undefined;
  /** Only dead letters that died before this instant (ISO-8601): a replay leaves out those that die during it. */
  diedBefore?: string | undefined;
}

/**
 * Rows read by the first call to the backend while filtering; each next call reads twice as many. The seam pages
 * by offset, so every call walks the dead index again from the newest: equal pages of 500 walked 105 000 index
 * entries to read a budget of 10 000, doubling pages walk 23 000 (and a filter that matches early still stops
 * after the first small page).
 */
export const SCAN_PAGE = 500;
/**
 * The most dead letters one filtered admin call reads. The seam lists dead letters newest first by offset, so
 * a filter is applied while reading; the budget keeps a dashboard click from reading millions of rows. A call
 * that stops at the budget says so, and its cursor continues from there.
 */
export const SCAN_BUDGET = 10_000;

export function hasFilter(filter: DeadFilter | undefined): boolean {
  return Boolean(filter && (filter.task || filter.tenantId || filter.errorText || filter.group || filter.payload || filter.diedBefore));
}

export function matchesFilter(dead: DeadJob, filter: DeadFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.task && dead.job.task !== filter.task) return false;
  if (filter.tenantId && dead.job.tenantId !== filter.tenantId) return false;
  if (filter.errorText) {
    const needle = filter.errorText.toLowerCase();
    const error = dead.lastError;
    const text = error ? `${error.class}: ${error.message} ${error.reason ?? ""}`.toLowerCase() : "";
    if (!text.includes(needle)) return false;
  }
  if (filter.group && errorGroup(dead.lastError).key !== filter.group) return false;
  if (filter.payload && !payloadHas(dead.job.payload, filter.payload)) return false;
  if (filter.diedBefore && Date.parse(dead.diedAt) >= Date.parse(filter.diedBefore)) return false;
  return true;
}

/** The value at `path` (object keys only) equals `equals`, as PostgreSQL's `@>` on a scalar would say. */
export function payloadHas(payload: unknown, { path, equals }: { path: string[]; equals: string | number | boolean }): boolean {
  let value: unknown = payload;
  for (const key of path) {
    if (value === null || typeof value !== "object" || Array.isArray(value) || !Object.hasOwn(value, key)) return false;
    value = (value as Record<string, unknown>)[key];
  }
  return value === equals;
}

/**
 * Dead letters that failed "the same way" share a group: the error class plus its message with the parts that
 * vary per job (ids, numbers, quoted values, e-mail addresses) replaced by placeholders.
 */
export function errorGroup(error: AttemptError | null): { key: string; errorClass: string; message: string } {
  if (!error) return { key: "(no error recorded)", errorClass: "(none)", message: "(no error recorded)" };
  const message = normaliseMessage(error.message);
  return { key: `${error.class}: ${message}`, errorClass: error.class, message };
}

/**
 * The most of a message's first line that is normalised. Cut before the replacements: some of them (the e-mail
 * pattern) take time quadratic in the text's length, and a message of 100 000 characters held the event loop for
 * seconds. The key is cut to 300 characters afterwards anyway.
 */
const GROUP_TEXT_MAX = 600;

export function normaliseMessage(message: string): string {
  const newline = message.indexOf("\n");
  return message
    .slice(0, Math.min(newline === -1 ? message.length : newline, GROUP_TEXT_MAX))
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>")
    .replace(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g, "<email>")
    .replace(/"[^"]*"|'[^']*'/g, "<value>")
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{12,}\b/gi, "<hex>")
    .replace(/\d+(\.\d+)?/g, "<n>")
    .trim()
    .slice(0, 300);
}

export interface ScanResult {
  rows: DeadJob[];
  /** Offset to continue from, or null when the end of the dead letters was reached. */
  nextOffset: number | null;
  scanned: number;
  /** True when the scan stopped at SCAN_BUDGET rather than at the end or at `want` matches. */
  budgetReached: boolean;
}

/** Reads dead letters from `offset`, keeping those that match, until `want` matches, the end, or the budget. */
export async function scanDead(
  backend: QueueBackend,
  params: {
    filter?: DeadFilter | undefined;
    offset: number;
    want: number;
    budget?: number;
    /** Filters see what the caller will see: an error-text filter must not confirm a redacted value. */
    redaction?: Redaction | undefined;
  },
): Promise<ScanResult> {
  const budget = params.budget ?? SCAN_BUDGET;
  const { redaction } = params;
  const seen = (dead: DeadJob): DeadJob =>
    redaction ? { job: redaction.job(dead.job), diedAt: dead.diedAt, lastError: redaction.error(dead.lastError, dead.job) } : dead;
  if (!hasFilter(params.filter)) {
    const page = await backend.listDead({ limit: params.want + 1, offset: params.offset });
    const rows = page.slice(0, params.want).map(seen);
    return {
      rows,
      nextOffset: page.length > params.want ? params.offset + rows.length : null,
      scanned: rows.length,
      budgetReached: false,
    };
  }
  const rows: DeadJob[] = [];
  let offset = params.offset;
  let scanned = 0;
  let pageSize = SCAN_PAGE;
  while (scanned < budget) {
    const limit = Math.min(pageSize, budget - scanned);
    pageSize *= 2;
    const page = await backend.listDead({ limit, offset });
    for (const stored of page) {
      const dead = seen(stored);
      offset += 1;
      scanned += 1;
      if (matchesFilter(dead, params.filter)) {
        rows.push(dead);
        if (rows.length >= params.want) return { rows, nextOffset: offset, scanned, budgetReached: false };
      }
    }
    if (page.length < limit) return { rows, nextOffset: null, scanned, budgetReached: false };
  }
  return { rows, nextOffset: offset, scanned, budgetReached: true };
}
