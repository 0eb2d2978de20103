/**
 * Retention of finished jobs (docs/queues.md#retention): how long completed jobs, dead letters and cancelled
 * jobs are kept before the pruner deletes them, by age or by count.
 */
export const RetainedState = { completed: "completed", dead: "dead", cancelled: "cancelled", expired: "expired" } as const;
export type RetainedState = (typeof RetainedState)[keyof typeof RetainedState];
export const RETAINED_STATES: readonly RetainedState[] = [RetainedState.completed, RetainedState.dead, RetainedState.cancelled, RetainedState.expired];

/**
 * `forever`: never pruned. `age`: pruned `ms` after the job finished (0: at the next run; a completed job with
 * `keep_completed = false` is not even stored). `count`: the newest `count` are kept, older ones pruned.
 */
export type Retention = { kind: "forever" } | { kind: "age"; ms: number } | { kind: "count"; count: number };

/** What `keep_* = true` (or nothing) means, per state. */
export const DEFAULT_RETENTION: Readonly<Record<RetainedState, Retention>> = {
  completed: { kind: "age", ms: 24 * 3_600_000 },
  dead: { kind: "age", ms: 30 * 86_400_000 },
  cancelled: { kind: "age", ms: 7 * 86_400_000 },
  // Expired jobs (docs/flow-control.md#deadlines) are kept as cancelled ones are: keep_cancelled sets both.
  expired: { kind: "age", ms: 7 * 86_400_000 },
};

/** One batch the pruner asks a backend to delete: finished before `before`, or beyond the newest `keepNewest`. */
export type PruneSelection = { before: Date } | { keepNewest: number };

export interface PruneParams {
  state: RetainedState;
  select: PruneSelection;
  /** At most this many jobs in this call: one bounded statement or script. */
  limit: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "90s", "15m", "24h", "7d", "2w", "500ms" in milliseconds; null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(text);
  if (!match) return null;
  return Math.round(Number(match[1]) * UNITS[match[2]!]!);
}

/** The selection a retention makes at `now`; null when it keeps everything. */
export function pruneSelection(retention: Retention, now: number): PruneSelection | null {
  if (retention.kind === "forever") return null;
  if (retention.kind === "count") return { keepNewest: retention.count };
  return { before: new Date(now - retention.ms) };
}

/** As jfast.toml would say it, for logs and /ready. */
export function describeRetention(retention: Retention): string {
  if (retention.kind === "forever") return "forever";
  if (retention.kind === "count") return `newest ${retention.count}`;
  return formatDuration(retention.ms);
}

function formatDuration(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
