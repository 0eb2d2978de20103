/**
 * Workers of this process and when each last beat (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease). A claim in this process first lets
 * every late worker beat: after a handler blocked the event loop, the timers that come due together run in no
 * promised order, and the claim of one worker must not find expired the lease of a job another worker of the same
 * process is still running. For leases judged in this process (memory, PGlite, RabbitMQ's deliveries) that is the
 * whole guarantee; a server's leases the heartbeat thread keeps too.
 */
export interface LocalBeat {
  /** How long after its last beat the worker is late (its beat interval, with room). */
  readonly lateAfterMs: number;
  /** When its last beat was written (performance.now()). */
  lastBeatAt: number;
  /** Its beat in flight, else a new one: a claim must not race a beat to a job's row. */
  beat(): Promise<void>;
}

const workers = new Set<LocalBeat>();

export function registerLocalBeat(beat: LocalBeat): () => void {
  workers.add(beat);
  return () => workers.delete(beat);
}

/** Beats every late worker of this process; resolves at once (no promise) in the common case of none. */
export function beatLateWorkers(): Promise<void> | null {
  let pending: Promise<void>[] | null = null;
  const now = performance.now();
  for (const w of workers) {
if (now - w.lastBeatAt < w.lateAfterMs) continue;
    (pending ??= []).push(w.beat());
  }
  return pending ? Promise.all(pending).then(() => undefined) : null;
}
