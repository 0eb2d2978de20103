import type { AttemptError } from "../core/job.js";
import type { AuditEntry } from "./audit.js";
import type { ActorRole } from "./tokens.js";

/** The audited actions that put a dead letter back in its queue with its attempts reset. */
export const RETRY_ACTIONS = ["deadLetters.retry", "deadLetters.replay", "flows.retryStep"] as const;

/** Where in a job's attempts an operator (or a script) retried it, and who, when the audit trail says. */
export interface RetryMark {
  /** How many of the job's failed attempts (`errors`, oldest first) came before the retry. */
  afterErrors: number;
  /**
   * When the audit trail recorded it. Null when only the attempt numbers show it: a retry made outside the admin
   * API (`jfast jobs retry`), an entry past the audit's id cap, or an audit trail kept in another process's memory.
   */
  at: string | null;
  actor: string | null;
  role: ActorRole | null;
  /** The dashboard that forwarded the person. */
  via: string | null;
  action: string | null;
}

/**
 * Places retries among a job's failed attempts. A retry resets the attempt count, so the attempt numbers
 * restarting marks one even without an audit entry; an audit entry written between the last failure before that
 * point and the first after it names who did it. An entry after the last failure is a retry that has not failed
 * since. Entries that fit nowhere (a second retry of a job that was no longer dead, a failed action) are left out.
 */
export function retryMarks(errors: readonly AttemptError[], entries: readonly AuditEntry[]): RetryMark[] {
  const audited = entries
    .filter((e) => !("error" in e.outcome))
    .map((e) => ({ entry: e, at: Date.parse(e.at) }))
    .sort((a, b) => a.at - b.at);
  const used = new Set<string>();
  // A row written by something else than jfast may hold anything in its errors: read each field defensively.
  const field = (i: number, key: "at" | "attempt"): unknown => {
    const e: unknown = errors[i];
    return typeof e === "object" && e !== null ? (e as unknown as Record<string, unknown>)[key] : undefined;
  };
  const time = (i: number) => {
    const at = field(i, "at");
    return typeof at === "string" ? Date.parse(at) : Number.NaN;
  };
  const attempt = (i: number) => {
    const n = field(i, "attempt");
    return typeof n === "number" ? n : null;
  };
  const claim = (from: number, to: number) => {
    const found = audited.find((a) => !used.has(a.entry.id) && a.at > from && a.at <= to);
    if (found) used.add(found.entry.id);
    return found?.entry ?? null;
  };
  const marks: RetryMark[] = [];
  for (let i = 1; i < errors.length; i++) {
    const [now, before] = [attempt(i), attempt(i - 1)];
    if (now === null || before === null || now > before) continue;
    marks.push(mark(i, claim(time(i - 1), time(i))));
  }
  const lastAt = errors.length ? time(errors.length - 1) : -Infinity;
  const last = Number.isNaN(lastAt) ? -Infinity : lastAt;
  const pending = claim(last, Infinity);
  if (pending) marks.push(mark(errors.length, pending));
  return marks;
}

function mark(afterErrors: number, entry: AuditEntry | null): RetryMark {
  return { afterErrors, at: entry?.at ?? null, actor: entry?.actor ?? null, role: entry?.role ?? null, via: entry?.via ?? null, action: entry?.action ?? null };
}
