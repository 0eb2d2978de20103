/** Exponential backoff: base × 2^(attempt-1), capped (5 minutes by default), with ±10% jitter so retries spread. */
export const MAX_BACKOFF_MS = 5 * 60 * 1000;

export interface BackoffOptions {
  baseMs: number;
  maxMs?: number;
  jitter?: boolean;
}

export function backoffDelayMs(attempt: number, { baseMs, maxMs = MAX_BACKOFF_MS, jitter = true }: BackoffOptions): number {
  const exponent = Math.max(0, attempt - 1);
  const raw = Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 40));
  if (!jitter) return raw;
  const spread = raw * 0.1;
  return Math.min(maxMs, Math.max(0, Math.round(raw - spread + Math.random() * 2 * spread)));
}
