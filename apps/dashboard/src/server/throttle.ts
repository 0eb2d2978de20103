/**
 * Sign-in throttling per client address: the first FREE_FAILURES wrong passwords cost nothing; from then on
 * each failure locks the address out for twice as long as the one before (2 s, 4 s, 8 s … up to 15 minutes),
 * and attempts during a lockout are refused without checking the password. A success clears the address.
 * Kept in this process's memory, like the sessions.
 */
export const FREE_FAILURES = 4;
const MAX_LOCK_MS = 15 * 60_000;
const FORGET_MS = 24 * 3600_000;

interface Record {
  failures: number;
  lockedUntil: number;
  last: number;
}

const STORE = Symbol.for("jfast.dashboard.throttle");
function records(): Map<string, Record> {
  const holder = globalThis as { [STORE]?: Map<string, Record> };
  return (holder[STORE] ??= new Map());
}

/** Milliseconds the address must still wait, 0 when it may try. */
export function lockedFor(address: string, now = Date.now()): number {
  const record = records().get(address);
  return record ? Math.max(0, record.lockedUntil - now) : 0;
}

/** Counts a failure; answers how many in a row and how long the address is now locked out. */
export function recordFailure(address: string, now = Date.now()): { failures: number; lockMs: number } {
  const store = records();
  for (const [key, r] of store) if (now - r.last > FORGET_MS) store.delete(key);
  const record = store.get(address) ?? { failures: 0, lockedUntil: 0, last: now };
  record.failures += 1;
  record.last = now;
  const over = record.failures - FREE_FAILURES;
  const lockMs = over > 0 ? Math.min(MAX_LOCK_MS, 2000 * 2 ** (over - 1)) : 0;
  record.lockedUntil = now + lockMs;
  store.set(address, record);
  return { failures: record.failures, lockMs };
}

export function recordSuccess(address: string): void {
  records().delete(address);
}
