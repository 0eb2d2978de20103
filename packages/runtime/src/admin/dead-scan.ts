import type { AttemptError } from "../core/job.js";
import type { DeadJob, QueueBackend } from "../core/queue-backend.js";
import { REDACTED, type Redaction } from "./redact.js";

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
/** The largest page read at once: a page of big dead letters is decoded by the backend in one piece. */
export const SCAN_PAGE_MAX = 2_000;

export function hasFilter(filter: DeadFilter | undefined): boolean {
  return Boolean(filter && (filter.task || filter.tenantId || filter.errorText || filter.group || filter.payload || filter.diedBefore));
}

/**
 * Whether a stored (not yet redacted) dead letter matches. The cheap tests come first, on what the backend already
 * read (task, tenant, time of death, a payload field); the error text is looked for in the stored text, and only
 * where it is found there (or the needle could overlap a "[redacted]" marker) is the error redacted to test what
 * a person would see: a filter must not confirm a redacted value, and most rows never pay for redaction.
 */
export function matchesFilter(dead: DeadJob, filter: DeadFilter | undefined, redaction?: Redaction): boolean {
  if (!filter) return true;
  if (filter.task && dead.job.task !== filter.task) return false;
  if (filter.tenantId && dead.job.tenantId !== filter.tenantId) return false;
  if (filter.diedBefore && Date.parse(dead.diedAt) >= Date.parse(filter.diedBefore)) return false;
  if (filter.payload && !payloadHas(dead.job.payload, filter.payload)) return false;
  if (!filter.errorText && !filter.group) return true;
  if (filter.errorText) {
    const needle = filter.errorText.toLowerCase();
    if (!errorText(dead.lastError).includes(needle) && !(redaction && touchesMarker(needle))) return false;
  }
  const shown = redaction ? redaction.error(dead.lastError, dead.job) : dead.lastError;
  if (filter.errorText && !errorText(shown).includes(filter.errorText.toLowerCase())) return false;
  if (filter.group && errorGroup(shown).key !== filter.group) return false;
  return true;
}

function errorText(error: AttemptError | null): string {
  return error ? `${error.class}: ${error.message} ${error.reason ?? ""}`.toLowerCase() : "";
}

/** True when a needle could match text that redaction produced: it shares a part of the marker at one of its ends. */
function touchesMarker(needle: string): boolean {
  const marker = REDACTED.toLowerCase();
  if (marker.includes(needle)) return true;
  for (let k = 1; k < Math.min(needle.length, marker.length); k++) {
    if (needle.endsWith(marker.slice(0, k)) || needle.startsWith(marker.slice(-k))) return true;
  }
  return needle.includes(marker);
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
  /** Matching dead letters as stored: redact what is shown of them (views.ts). */
  rows: DeadJob[];
  /** Offset to continue from, or null when the end of the dead letters was reached. */
  nextOffset: number | null;
  scanned: number;
  /** True when the scan stopped at SCAN_BUDGET rather than at the end or at `want` matches. */
  budgetReached: boolean;
}

/**
 * Rows tested between two turns of the event loop. A scan of thousands of large dead letters held the loop for
 * seconds (every request and heartbeat of the service waited); each chunk now takes a few milliseconds.
 */
export const SCAN_YIELD_EVERY = 50;

/** Lets the event loop run what waits (I/O, timers) before the next chunk of CPU work. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
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
  const filtered = hasFilter(params.filter);
  const rows: DeadJob[] = [];
  let offset = params.offset;
  let scanned = 0;
  let pageSize = filtered ? SCAN_PAGE : Math.min(SCAN_PAGE, params.want + 1);
  while (scanned < budget) {
    // Without a filter every row read is a match: one more than wanted tells whether there is a next page.
    const limit = filtered ? Math.min(pageSize, budget - scanned) : Math.min(pageSize, params.want - rows.length + 1);
    pageSize = Math.min(pageSize * 2, SCAN_PAGE_MAX);
    const page = await backend.listDead({ limit, offset });
    for (let i = 0; i < page.length; i++) {
      if (i > 0 && i % SCAN_YIELD_EVERY === 0) await yieldToLoop();
      if (rows.length >= params.want) return { rows, nextOffset: offset, scanned, budgetReached: false };
      const dead = page[i]!;
      offset += 1;
      scanned += 1;
      if (!filtered || matchesFilter(dead, params.filter, params.redaction)) rows.push(dead);
    }
    if (page.length < limit) return { rows, nextOffset: null, scanned, budgetReached: false };
    if (rows.length >= params.want) return { rows, nextOffset: offset, scanned, budgetReached: false };
    await yieldToLoop();
  }
  return { rows, nextOffset: offset, scanned, budgetReached: true };
}
