import { createHash } from "node:crypto";
import type { AttemptError, JobJSON } from "../core/job.js";
import { CorruptJob } from "../core/corrupt-job.js";
import { scrubPairs } from "./redact-pairs.js";

export const REDACTED = "[redacted]";

/**
 * Names redacted unless `[admin] redact_defaults = false`: a payload field whose name, lower-cased and without
 * `_` or `-`, contains one of these (`db_password`, `stripeSecretKey`, `X-Api-Key`, `cardNumber`).
 */
export const DEFAULT_REDACTED_PARTS = [
  "password",
  "passwd",
  "secret",
  "token",
  "apikey",
  "authorization",
  "privatekey",
  "cookie",
  "cardnumber",
  "creditcard",
  "cvv",
  "cvc",
  "iban",
] as const;

/**
 * A redacted value shorter than this is not looked for in error text: replacing every "42" or "ok" in a message
 * would hide what the message says without protecting anything worth it.
 */
const MIN_VALUE_LENGTH = 4;

/**
 * What the admin API hides before anything leaves the service: payload fields by name (listed ones exactly,
 * case-insensitive; the defaults as parts of names), the values found under those fields wherever they reappear
 * in the job's error texts, as written or escaped (a driver's error quoting the query's parameters, a message
 * built with JSON.stringify(payload)), any `"<hidden name>": value` pair in error text, and unique keys (shown as
 * a hash: a key derived from the payload carries its values). Works on copies; the stored job is untouched.
 */
export interface Redaction {
  /** True when a field of this name is redacted. */
  hides(name: string): boolean;
  payload(value: unknown): unknown;
  /** The job with its payload and every error's text redacted. */
  job(job: JobJSON): JobJSON;
  error(error: AttemptError | null, job: JobJSON): AttemptError | null;
  /** Any text (an outbox row's body that is not JSON): hidden pairs and the given values, escaped forms included. */
  text(text: string, values?: readonly string[]): string;
  /** An error's texts with hidden pairs and the given values (from `values(payload)`) hidden. */
  attempt(error: AttemptError | null, values: readonly string[]): AttemptError | null;
  /** The values under hidden fields of a payload, with their escaped forms, to look for in text. */
  values(payload: unknown): string[];
}

export function createRedaction(params: { fields: readonly string[]; defaults: boolean }): Redaction {
  const exact = new Set(params.fields.map((f) => f.toLowerCase()));
  const parts: readonly string[] = params.defaults ? DEFAULT_REDACTED_PARTS : [];
  const decide = (name: string): boolean => {
    const lower = name.toLowerCase();
    if (exact.has(lower)) return true;
    if (parts.length === 0) return false;
    const bare = lower.replace(/[_-]/g, "");
    return parts.some((part) => bare.includes(part));
  };
  // Payloads repeat their field names row after row; a scan asks about the same few thousand times.
  const decided = new Map<string, boolean>();
  const hides = (name: string): boolean => {
    let answer = decided.get(name);
    if (answer === undefined) {
      answer = decide(name);
      if (decided.size >= 10_000) decided.clear();
      decided.set(name, answer);
    }
    return answer;
  };

  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map((child) => walk(child));
    if (node && typeof node === "object") {
      // Own keys copied as own properties, `__proto__` included (an assignment would set the prototype instead).
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        const value = hides(key) ? REDACTED : walk(child);
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return node;
  };

  /** Like walk, without building the copy: a dead-letter scan runs this on every row it tests. */
  const gather = (node: unknown, found: Set<string>): void => {
    if (Array.isArray(node)) {
      for (const child of node) gather(child, found);
    } else if (node && typeof node === "object") {
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        const child = (node as Record<string, unknown>)[key];
        if (hides(key)) collect(child, found);
        else if (child && typeof child === "object") gather(child, found);
      }
    }
  };

  const hiddenValues = (payload: unknown): string[] => {
    const found = new Set<string>();
    gather(readable(payload), found);
    if (found.size === 0) return [];
    const forms = new Set<string>();
    for (const value of found) for (const form of writtenForms(value)) forms.add(form);
    // Longest first, so that a value containing another is replaced whole.
    return [...forms].sort((a, b) => b.length - a.length);
  };

  const scrub = (text: string, values: readonly string[]): string => {
    let out = scrubPairs(text, hides, REDACTED);
    for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
    return out;
  };

  const error = (attempt: AttemptError | null, values: readonly string[]): AttemptError | null => {
    if (attempt === null || typeof attempt !== "object") return attempt;
    return {
      ...attempt,
      class: scrub(String(attempt.class), values),
      message: scrub(String(attempt.message), values),
      ...(attempt.stack === undefined ? {} : { stack: scrub(String(attempt.stack), values) }),
      ...(typeof attempt.reason === "string" ? { reason: scrub(attempt.reason, values) } : {}),
    };
  };

  /** A quarantined job's stored text: decoded and redacted where it is JSON, else hidden (it may be anything). */
  const payloadOf = (job: JobJSON): unknown => {
    const shown = walk(job.payload);
    if (job.task !== CorruptJob.task || !shown || typeof shown !== "object" || Array.isArray(shown)) return shown;
    const out = { ...(shown as Record<string, unknown>) };
    for (const field of ["raw", "body"] as const) {
      const text = out[field];
      if (typeof text !== "string") continue;
      const decoded = parseJson(text);
      out[field] = decoded.ok ? JSON.stringify(walk(decoded.value)) : `${REDACTED} (${text.length} characters that are not JSON)`;
    }
    return out;
  };

  return {
    hides,
    payload: (value) => walk(value),
    job(job) {
      const values = hiddenValues(job.payload);
      // A row written by hand may hold anything in its errors: shown as it is rather than failing the view.
      const errors = Array.isArray(job.errors) ? job.errors.map((e) => error(e, values)!) : job.errors;
      const redacted: JobJSON = { ...job, payload: payloadOf(job), errors };
      if (job.unique) redacted.unique = { ...job.unique, key: hashedKey(String(job.unique.key)) };
      return redacted;
    },
    error: (attempt, job) => error(attempt, hiddenValues(job.payload)),
    text: (text, values = []) => scrub(text, values),
    attempt: error,
    values: hiddenValues,
  };
}

/**
 * How a unique key is shown: a key derived from the payload (the default: its JSON) carries the payload's values,
 * and a scrubbed key would still tell a short secret. The hash still tells two jobs with the same key apart.
 */
export function hashedKey(key: string): string {
  return `sha256:${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;
}

/**
 * The ways a value reappears in text: as written, JSON-escaped once (inside a string: `JSON.stringify(payload)`)
 * and twice (that JSON inside another JSON string: an error of a logged request), and URL-encoded.
 */
function writtenForms(value: string): string[] {
  const once = JSON.stringify(value).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [...new Set([value, once, twice, encodeURIComponent(value)])];
}

/** A quarantined job's payload is `{ raw }` or `{ body }` text; the values under hidden fields inside it count too. */
function readable(payload: unknown): unknown {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return payload;
  const { raw, body } = payload as { raw?: unknown; body?: unknown };
  const text = typeof raw === "string" ? raw : typeof body === "string" ? body : null;
  if (text === null) return payload;
  const decoded = parseJson(text);
  return decoded.ok ? [payload, decoded.value] : payload;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Every string (and number, as written) under a redacted field, long enough to be worth looking for. */
function collect(value: unknown, into: Set<string>): void {
  if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    if (text.length >= MIN_VALUE_LENGTH) into.add(text);
    return;
  }
  if (value && typeof value === "object") for (const child of Object.values(value)) collect(child, into);
}
