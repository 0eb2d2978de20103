import type { TraceEntry, TraceView } from "./trace.js";

/** Every service's share of one request's timeline, joined (the dashboard's Timeline page). */
export interface MergedTrace {
  requestId: string | null;
  /** Oldest first; an entry two services both report (a job relayed through an outbox) is kept once per service. */
  entries: TraceEntry[];
  /** The first entry's start, and the last finish or start: the waterfall's span. */
  startedAt: string | null;
  finishedAt: string | null;
  complete: boolean;
  /** Each service's notes, prefixed with its name. */
  notes: string[];
}

/**
 * The request id named by any share: a service that found the job or flow names it, so the others can be asked
 * for that request id instead of an id they do not hold.
 */
export function traceRequestId(views: readonly TraceView[]): string | null {
  return views.find((v) => v.matched !== "request" && v.requestId !== null)?.requestId ?? views.find((v) => v.entries.length > 0)?.requestId ?? null;
}

export function mergeTraces(views: readonly TraceView[]): MergedTrace {
  const seen = new Set<string>();
  const entries: TraceEntry[] = [];
  for (const view of views) {
    for (const entry of view.entries) {
      const key = `${entry.service}\u0000${entry.kind}\u0000${entry.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      entries.push(entry);
    }
  }
  entries.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || a.service.localeCompare(b.service));
  let end: number | null = null;
  for (const e of entries) end = Math.max(end ?? 0, Date.parse(e.finishedAt ?? e.startedAt));
  return {
    requestId: traceRequestId(views),
    entries,
    startedAt: entries[0]?.startedAt ?? null,
    finishedAt: end === null ? null : new Date(end).toISOString(),
    complete: views.every((v) => v.complete),
    notes: views.flatMap((v) => v.notes.map((note) => `${v.service}: ${note}`)),
  };
}
