import type { AttemptError, JobJSON } from "../core/job.js";

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
 * case-insensitive; the defaults as parts of names), and the values found under those fields wherever they reappear
 * in the job's error messages and stacks (a driver's error quoting the query's parameters). Works on copies; the
 * stored job is untouched.
 */
export interface Redaction {
  /** True when a field of this name is redacted. */
  hides(name: string): boolean;
  payload(value: unknown): unknown;
  /** The job with its payload and every error's text redacted. */
  job(job: JobJSON): JobJSON;
  error(error: AttemptError | null, job: JobJSON): AttemptError | null;
}

export function createRedaction(params: { fields: readonly string[]; defaults: boolean }): Redaction {
  const exact = new Set(params.fields.map((f) => f.toLowerCase()));
  const parts: readonly string[] = params.defaults ? DEFAULT_REDACTED_PARTS : [];
  const hides = (name: string): boolean => {
    const lower = name.toLowerCase();
    if (exact.has(lower)) return true;
    if (parts.length === 0) return false;
    const bare = lower.replace(/[_-]/g, "");
    return parts.some((part) => bare.includes(part));
  };

  const walk = (node: unknown, found: Set<string> | null): unknown => {
    if (Array.isArray(node)) return node.map((child) => walk(child, found));
    if (node && typeof node === "object") {
      // Own keys copied as own properties, `__proto__` included (an assignment would set the prototype instead).
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        let value: unknown;
        if (hides(key)) {
          if (found) collect(child, found);
          value = REDACTED;
        } else {
          value = walk(child, found);
        }
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return node;
  };

  const hiddenValues = (payload: unknown): string[] => {
    const found = new Set<string>();
    walk(payload, found);
    // Longest first, so that a value containing another is replaced whole.
    return [...found].sort((a, b) => b.length - a.length);
  };

  const scrub = (text: string, values: readonly string[]): string => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
    return out;
  };

  const error = (attempt: AttemptError | null, values: readonly string[]): AttemptError | null => {
    if (attempt === null || typeof attempt !== "object" || values.length === 0) return attempt;
    return {
      ...attempt,
      class: scrub(String(attempt.class), values),
      message: scrub(String(attempt.message), values),
      ...(attempt.stack === undefined ? {} : { stack: scrub(String(attempt.stack), values) }),
    };
  };

  return {
    hides,
    payload: (value) => walk(value, null),
    job(job) {
      const values = hiddenValues(job.payload);
      // A row written by hand may hold anything in its errors: shown as it is rather than failing the view.
      const errors = Array.isArray(job.errors) ? job.errors.map((e) => error(e, values)!) : job.errors;
      const redacted: JobJSON = { ...job, payload: walk(job.payload, null), errors };
      // A key derived from the payload (the default: its JSON) carries the payload's values.
      if (job.unique) redacted.unique = { ...job.unique, key: scrub(String(job.unique.key), values) };
      return redacted;
    },
    error: (attempt, job) => error(attempt, hiddenValues(job.payload)),
  };
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
