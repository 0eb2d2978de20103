import { TRPCError } from "@trpc/server";
import type { AdminPrincipal } from "./tokens.js";

/**
 * Calls of the scanning views (deadLetters.groups, a filtered deadLetters.preview, a jobs.search that scans) one
 * caller may make per window. Each reads up to SCAN_BUDGET dead letters; a loop of them kept the service busy.
 * The dashboard's error-groups page refreshing every 3 s uses about a third of it.
 */
export const SCAN_CALLS = 10;
export const SCAN_WINDOW_MS = 10_000;
/** Callers remembered at once; past it, the ones whose bucket is full again are forgotten first. */
const MAX_CALLERS = 10_000;

export interface ScanLimiter {
  /** Calls per caller per window (`[admin] scan_calls`). */
  readonly calls: number;
  /** Takes one call from the caller's bucket; when it is empty, says in how many ms the next call is allowed. */
  take(caller: string, now?: number): { allowed: true } | { allowed: false; retryAfterMs: number };
}

/** A token bucket per caller: SCAN_CALLS at once, refilled evenly over SCAN_WINDOW_MS. */
export function createScanLimiter(params: { calls?: number; windowMs?: number } = {}): ScanLimiter {
  const capacity = params.calls ?? SCAN_CALLS;
  const perMs = capacity / (params.windowMs ?? SCAN_WINDOW_MS);
  const buckets = new Map<string, { tokens: number; at: number }>();
  const level = (bucket: { tokens: number; at: number }, now: number) => Math.min(capacity, bucket.tokens + (now - bucket.at) * perMs);
  return {
    calls: capacity,
    take(caller, now = Date.now()) {
      const bucket = buckets.get(caller) ?? { tokens: capacity, at: now };
      const tokens = level(bucket, now);
      if (tokens < 1) return { allowed: false, retryAfterMs: Math.ceil((1 - tokens) / perMs) };
      buckets.set(caller, { tokens: tokens - 1, at: now });
      if (buckets.size > MAX_CALLERS) {
        for (const [key, other] of buckets) if (level(other, now) >= capacity) buckets.delete(key);
      }
      return { allowed: true };
    },
  };
}

/** Who a bucket belongs to: the token, and the person a dashboard's token acts for. */
export function scanCaller(principal: AdminPrincipal): string {
  return principal.via ? `${principal.via}\u0000${principal.name}` : principal.name;
}

/** The refusal: 429 with the wait in the message and in `retryAfterSeconds` (the handler sets Retry-After from it). */
export class ScanRateLimited extends Error {
  readonly code = "SCAN_RATE_LIMITED";
  constructor(readonly what: string, readonly retryAfterSeconds: number, calls = SCAN_CALLS) {
    super(
      `${what} reads up to 10 000 dead letters per call, and this caller made ${calls} such calls in the last ${SCAN_WINDOW_MS / 1000} s; ` +
        `try again in ${retryAfterSeconds} s, or narrow the view (a task, a tenant) and call it less often, or raise [admin] scan_calls (jfast docs admin-api#scan-limits)`,
    );
    this.name = "ScanRateLimited";
  }
}

/** Counts one scan against the caller's bucket, or refuses it with TOO_MANY_REQUESTS. */
export function takeScan(limiter: ScanLimiter, principal: AdminPrincipal, what: string): void {
  const taken = limiter.take(scanCaller(principal));
  if (taken.allowed) return;
  const cause = new ScanRateLimited(what, Math.max(1, Math.ceil(taken.retryAfterMs / 1000)), limiter.calls);
  throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: cause.message, cause });
}
