import { z } from "zod";
import { DEFAULT_RETENTION, parseDuration, RETAINED_STATES, type RetainedState, type Retention } from "../core/retention.js";
import { ConfigError } from "../errors/jfast-error.js";

const DOCS = "jfast docs queues#retention";

/**
 * `keep_completed`, `keep_dead`, `keep_cancelled` (docs/queues.md#retention): true (the default retention), false
 * (none), a duration such as "7d", or a count of the newest to keep. Durations are read by resolveRetention.
 */
export const retentionSchema = z.union([z.boolean(), z.string(), z.number().int().min(0)], {
  error: 'expected true, false, a duration such as "7d", or a number of jobs to keep such as 10000',
});

type RetentionValue = boolean | string | number;
type RetentionKeys = Partial<Record<`keep_${RetainedState}`, RetentionValue>>;

/** `base` with the `keep_*` keys `section` sets on top (all three for `[plugin.queue]`, whose schema defaults them). */
export function resolveRetention(
  section: RetentionKeys,
  at: { where: string; file: string; base?: Record<RetainedState, Retention> },
): Record<RetainedState, Retention> {
  const out: Record<RetainedState, Retention> = { ...(at.base ?? DEFAULT_RETENTION) };
  for (const state of RETAINED_STATES) {
    const value = section[`keep_${state}`];
    if (value !== undefined) out[state] = retentionOf(value, { key: `${at.where} keep_${state}`, state, file: at.file });
  }
  // Expired jobs have no key of their own: they are kept as cancelled ones are (docs/flow-control.md#deadlines).
  out.expired = out.cancelled;
  return out;
}

function retentionOf(value: RetentionValue, params: { key: string; state: RetainedState; file: string }): Retention {
  if (value === true) return DEFAULT_RETENTION[params.state];
  if (value === false) return { kind: "age", ms: 0 };
  if (typeof value === "number") return { kind: "count", count: value };
  if (value.trim() === "forever") return { kind: "forever" };
  const ms = parseDuration(value);
  if (ms === null) {
    throw new ConfigError(`${params.file}: ${params.key} = "${value}" is not a retention`, {
      code: "CONFIG_INVALID",
      hint: `write a duration with its unit ("90s", "15m", "24h", "7d"), a number of jobs to keep (10000), true, false or "forever"`,
      docs: DOCS,
    });
  }
  return { kind: "age", ms };
}

/** `keep_completed = false` (or 0): completed jobs are not stored at all, which saves a write per job. */
export function keepsCompleted(retention: Record<RetainedState, Retention>, value: RetentionValue): boolean {
  const kept = retention.completed;
  return !(value === false || (kept.kind === "count" && kept.count === 0));
}

export function resolvePruneInterval(value: string | number, file: string): number {
  const ms = typeof value === "number" ? Math.round(value * 1000) : parseDuration(value);
  if (ms === null || ms < 1000) {
    throw new ConfigError(`${file}: [plugin.queue] prune_interval = ${JSON.stringify(value)} is not an interval of at least a second`, {
      code: "CONFIG_INVALID",
      hint: `write a duration with its unit, such as "1m" or "30s" (or a number of seconds)`,
      docs: DOCS,
    });
  }
  return ms;
}
