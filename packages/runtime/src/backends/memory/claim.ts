import { Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import { workerLostError, type ClaimParams } from "../../core/queue-backend.js";
import type { MemoryStore } from "./store.js";

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
  const claimed: Job[] = [];
  const allowed = store.allowances(now);
  let limitedRoom = startable;
  for (const entry of candidates) {
    if (claimed.length >= limit) break;
    // A job of a task at its limit stays waiting; the next candidates (other tasks) are still claimed.
    const room = allowed.get(entry.json.task);
    if (room !== undefined) {
      if (room <= 0 || limitedRoom <= 0) continue;
      limitedRoom--;
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
    entry.state = JobState.running;
    entry.lockedBy = workerId;
    entry.lockedUntil = now + leaseMs;
    entry.json.attempts += 1;
    claimed.push(Job.fromJSON(structuredClone(entry.json)));
  }
  return claimed;
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
  for (const e of store.entries.values()) {
    if (paused.has(e.json.task)) continue;
    let due: number | null = null;
    if (e.state === JobState.ready && allowed.get(e.json.task) === 0) {
      const at = store.starts.get(e.json.task)?.nextAt(now) ?? null;
      due = at === null ? null : Math.max(at, Date.parse(e.json.availableAt));
    } else if (e.state === JobState.ready) due = Date.parse(e.json.availableAt);
    else if (e.state === JobState.running && e.lockedUntil !== null) due = e.lockedUntil + 1;
    if (due !== null && (next === null || due < next)) next = due;
  }
  return next === null ? null : Math.max(0, next - now);
}
