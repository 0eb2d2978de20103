import { Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import { workerLostError, type ClaimParams } from "../../core/queue-backend.js";
import type { Entry, MemoryStore } from "./store.js";

export function claim(store: MemoryStore, { workerId, limit, leaseMs, pausedTasks = [], startable = limit }: ClaimParams): Job[] {
  const now = Date.now();
  const paused = new Set(pausedTasks);
  const candidates = [...store.entries.values()]
    .filter(
      (e) =>
        !paused.has(e.json.task) &&
        ((e.state === JobState.ready && Date.parse(e.json.availableAt) <= now) || (e.state === JobState.running && (e.lockedUntil ?? 0) < now)),
    )
    // Priority first (0 before 9), then availability, then enqueue order: the order every backend claims in.
    .sort((a, b) => a.json.priority - b.json.priority || Date.parse(a.json.availableAt) - Date.parse(b.json.availableAt) || a.seq - b.seq);
  // Fair share across keys (docs/flow-control.md#fair-share-across-keys): fair tasks' jobs in their keys' turns.
  const turns = store.fairTasks.size > 0 ? fairTurns(store, candidates) : null;
  if (turns) {
    const tick = (e: Entry) => store.turnTicks.get(`${e.json.task}\u0000${e.json.limitKey}`) ?? -1;
    candidates.sort((a, b) => (turns.get(a) ?? 0) - (turns.get(b) ?? 0) || (turns.has(a) && turns.has(b) ? tick(a) - tick(b) : 0));
  }
  const claimed: Job[] = [];
  const allowed = store.allowances(now);
  let limitedRoom = startable;
  // Per-key concurrency (docs/flow-control.md): how many run per task and key, counted only when a task has it.
  const byKey = store.keyedTasks.size > 0 ? store.runningByKey(now) : null;
  // Order per key (docs/flow-control.md#order-per-key): only a key's head may start, and not while a dead job blocks it.
  const order = store.orderedTasks.size > 0 ? store.orderOf() : null;
  for (const entry of candidates) {
    if (claimed.length >= limit) break;
    // A job of a task at its limit stays waiting; the next candidates (other tasks) are still claimed.
    const room = allowed.get(entry.json.task);
    if (room !== undefined) {
      // Only a task whose starts count is held to the worker's free slots; a fair task alone may be buffered.
      const counted = !store.uncountedTasks.has(entry.json.task);
      if (room <= 0 || (counted && limitedRoom <= 0)) continue;
      if (order && entry.json.limitKey !== undefined && store.orderedTasks.has(entry.json.task)) {
        const k = `${entry.json.task}\u0000${entry.json.limitKey}`;
        if (order.heads.get(k) !== entry.seq || order.blocked.has(k)) continue;
      }
      let keyed: string | null = null;
      const perKey = byKey && store.keyedTasks.get(entry.json.task);
      if (perKey !== undefined && perKey !== null && entry.json.limitKey !== undefined) {
        keyed = `${entry.json.task}\u0000${entry.json.limitKey}`;
        // Its key at its limit: it waits, and the jobs of other keys behind it are still claimed.
        if ((byKey!.get(keyed) ?? 0) >= perKey) continue;
      }
      // A per-key rate limit (docs/flow-control.md#per-key-rate-limits): its key's starts in the window.
      const window = entry.json.limitKey === undefined ? null : store.keyWindow(entry.json.task, entry.json.limitKey);
      if (window && window.room(now) <= 0) continue;
      window?.add(now);
      if (keyed !== null) byKey!.set(keyed, (byKey!.get(keyed) ?? 0) + 1);
      if (counted) limitedRoom--;
      allowed.set(entry.json.task, room - 1);
      store.starts.get(entry.json.task)?.add(now);
    }
    if (entry.state === JobState.running) {
      // Its worker vanished mid-attempt: that attempt is spent.
      entry.json.errors.push(workerLostError(entry.json.attempts));
      if (entry.json.attempts >= (entry.json.maxAttempts ?? 1)) {
        store.markDead(entry, now);
        continue;
      }
    }
    const turn = turns?.get(entry);
    if (turn !== undefined) {
      store.turns.set(`${entry.json.task}\u0000${entry.json.limitKey}`, turn);
      store.turnTicks.set(`${entry.json.task}\u0000${entry.json.limitKey}`, ++store.turnTick);
    }
    entry.state = JobState.running;
    entry.lockedBy = workerId;
    entry.lockedUntil = now + leaseMs;
    entry.json.attempts += 1;
    claimed.push(Job.fromJSON(structuredClone(entry.json)));
  }
  return claimed;
}

/**
 * Each candidate of a fair task placed at its key's virtual time: the key's served turns (never behind the least
 * served key of its task among the candidates) plus 1/weight per job of the key before it. Others: none (first).
 */
function fairTurns(store: MemoryStore, candidates: readonly Entry[]): Map<Entry, number> {
  const least = new Map<string, number>();
  for (const e of candidates) {
    if (e.json.limitKey === undefined || !store.fairTasks.has(e.json.task)) continue;
    const served = store.turns.get(`${e.json.task}\u0000${e.json.limitKey}`);
    if (served !== undefined) least.set(e.json.task, Math.min(least.get(e.json.task) ?? Infinity, served));
  }
  const nth = new Map<string, number>();
  const turns = new Map<Entry, number>();
  for (const e of candidates) {
    const weights = store.fairTasks.get(e.json.task);
    if (e.json.limitKey === undefined || weights === undefined) continue;
    const k = `${e.json.task}\u0000${e.json.limitKey}`;
    const floor = least.get(e.json.task) ?? 0;
    const n = (nth.get(k) ?? 0) + 1;
    nth.set(k, n);
    turns.set(e, Math.max(store.turns.get(k) ?? floor, floor) + n / (weights[e.json.limitKey] ?? 1));
  }
  return turns;
}

export function waitForWork(
  store: MemoryStore,
  { signal, timeoutMs, pausedTasks = [] }: { signal: AbortSignal; timeoutMs: number; pausedTasks?: readonly string[] },
): Promise<void> {
  if (signal.aborted || store.closed) return Promise.resolve();
  const nextDue = nextDueIn(store, new Set(pausedTasks));
  const wait = Math.max(0, Math.min(timeoutMs, nextDue ?? timeoutMs));
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      store.waiters.delete(done);
      resolve();
    };
    const timer = setTimeout(done, wait);
    signal.addEventListener("abort", done, { once: true });
    store.waiters.add(done);
  });
}

function nextDueIn(store: MemoryStore, paused: ReadonlySet<string>): number | null {
  const now = Date.now();
  let next: number | null = null;
  // A task at its limit wakes its waiters when a slot frees (complete, retry, kill, release) or its window
  // lets one more start; its due jobs must not wake them before.
  const allowed = store.allowances(now);
  const byKey = store.keyedTasks.size > 0 ? store.runningByKey(now) : null;
  const order = store.orderedTasks.size > 0 ? store.orderOf() : null;
  for (const e of store.entries.values()) {
    if (paused.has(e.json.task)) continue;
    let due: number | null = null;
    // A job whose key is at its limit waits for a slot of that key to free, which wakes the waiters.
    if (byKey && e.state === JobState.ready && e.json.limitKey !== undefined && (byKey.get(`${e.json.task}\u0000${e.json.limitKey}`) ?? 0) >= (store.keyedTasks.get(e.json.task) ?? Infinity)) continue;
    // A job behind its key's head, or of a blocked key, waits for them: their outcome wakes the waiters.
    if (order && e.state === JobState.ready && e.json.limitKey !== undefined && store.orderedTasks.has(e.json.task)) {
      const k = `${e.json.task}\u0000${e.json.limitKey}`;
      if (order.heads.get(k) !== e.seq || order.blocked.has(k)) continue;
    }
    // A job whose key used up its rate window is due when the window lets one more start.
    const window = e.state === JobState.ready && e.json.limitKey !== undefined ? store.keyWindow(e.json.task, e.json.limitKey) : null;
    const keyNext = window ? window.nextAt(now) : null;
    if (keyNext !== null) {
      const at = Math.max(keyNext, Date.parse(e.json.availableAt));
      if (next === null || at < next) next = at;
      continue;
    }
    if (e.state === JobState.ready && allowed.get(e.json.task) === 0) {
      const at = store.starts.get(e.json.task)?.nextAt(now) ?? null;
      due = at === null ? null : Math.max(at, Date.parse(e.json.availableAt));
    } else if (e.state === JobState.ready) due = Date.parse(e.json.availableAt);
    else if (e.state === JobState.running && e.lockedUntil !== null) due = e.lockedUntil + 1;
    if (due !== null && (next === null || due < next)) next = due;
  }
  return next === null ? null : Math.max(0, next - now);
}
