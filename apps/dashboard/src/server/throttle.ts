/**
 * Sign-in throttling, per client address and per account name (docs/dashboard.md#sign-in-throttling). An attempt
 * is counted when it starts, before its password is checked, so parallel guesses cannot all slip in before the
 * first failure is written down; a success then clears both counts. Past the free attempts each one locks the key
 * out for twice as long as the one before (2 s, 4 s, 8 s … up to 15 minutes), and attempts during a lockout are
 * refused without checking the password. One address has one password check running at a time (the others wait
 * their turn, up to MAX_WAITING), which also bounds the scrypt work one client can cause. Kept in this process's
 * memory, like the sessions.
 */
export const FREE_FAILURES = 4;
/** An account is attacked from many addresses; a little more room, so one typo-prone person is not locked by it. */
export const FREE_ACCOUNT_FAILURES = 10;
/** Attempts from one address waiting for their turn; more are refused at once. */
export const MAX_WAITING = 8;
const MAX_LOCK_MS = 15 * 60_000;
const FORGET_MS = 24 * 3600_000;

interface Count {
  failures: number;
  lockedUntil: number;
  last: number;
}

interface State {
  counts: Map<string, Count>;
  /** Per address: the end of the last check queued, and how many wait for it. */
  queues: Map<string, { tail: Promise<void>; waiting: number }>;
}

const STORE = Symbol.for("jfast.dashboard.throttle");
function state(): State {
  const holder = globalThis as { [STORE]?: State };
  return (holder[STORE] ??= { counts: new Map(), queues: new Map() });
}

const addressKey = (address: string) => `address ${address}`;
const accountKey = (account: string) => `account ${account.toLowerCase()}`;

/** Milliseconds the address (or, given, the account) must still wait, 0 when it may try. */
export function lockedFor(address: string, account?: string, now = Date.now()): number {
  const { counts } = state();
  const keys = account === undefined ? [addressKey(address)] : [addressKey(address), accountKey(account)];
  return Math.max(0, ...keys.map((key) => (counts.get(key)?.lockedUntil ?? 0) - now));
}

function count(key: string, free: number, now: number): Count {
  const { counts } = state();
  const record = counts.get(key) ?? { failures: 0, lockedUntil: 0, last: now };
  record.failures += 1;
  record.last = now;
  const over = record.failures - free;
  record.lockedUntil = over > 0 ? now + Math.min(MAX_LOCK_MS, 2000 * 2 ** (over - 1)) : 0;
  counts.set(key, record);
  return record;
}

function forgetOld(now: number): void {
  const { counts } = state();
  for (const [key, record] of counts) if (now - record.last > FORGET_MS) counts.delete(key);
}

export type Attempt<T> =
  | { outcome: "locked"; waitMs: number }
  | { outcome: "checked"; value: T; ok: boolean; failures: number; lockMs: number };

/**
 * Runs one sign-in attempt: waits for the address's turn, refuses it while the address or the account is locked
 * out, else counts it and runs `check` (true when the password was right; then both counts are cleared).
 */
export async function attempt<T>(params: { address: string; account: string; check: () => Promise<{ ok: boolean; value: T }> }): Promise<Attempt<T>> {
  const { address, account, check } = params;
  const queues = state().queues;
  const queue = queues.get(address) ?? { tail: Promise.resolve(), waiting: 0 };
  if (queue.waiting >= MAX_WAITING) return { outcome: "locked", waitMs: Math.max(1000, lockedFor(address, account)) };
  queue.waiting += 1;
  queues.set(address, queue);
  const previous = queue.tail;
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  queue.tail = previous.then(() => done);
  try {
    await previous;
    const now = Date.now();
    const waitMs = lockedFor(address, account, now);
    if (waitMs > 0) return { outcome: "locked", waitMs };
    forgetOld(now);
    const byAddress = count(addressKey(address), FREE_FAILURES, now);
    const byAccount = count(accountKey(account), FREE_ACCOUNT_FAILURES, now);
    const { ok, value } = await check();
    if (ok) {
      recordSuccess(address, account);
      return { outcome: "checked", value, ok, failures: 0, lockMs: 0 };
    }
    const lockMs = Math.max(0, byAddress.lockedUntil - now, byAccount.lockedUntil - now);
    return { outcome: "checked", value, ok, failures: Math.max(byAddress.failures, byAccount.failures), lockMs };
  } finally {
    release();
    queue.waiting -= 1;
    if (queue.waiting === 0 && queues.get(address) === queue) queues.delete(address);
  }
}

/** Clears the address and the account (a right password). */
export function recordSuccess(address: string, account?: string): void {
  const { counts } = state();
  counts.delete(addressKey(address));
  if (account !== undefined) counts.delete(accountKey(account));
}
