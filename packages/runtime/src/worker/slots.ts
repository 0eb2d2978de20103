import type { Job } from "../core/job.js";
import type { AttemptCancellation } from "./cancellation.js";
import { createDeferred, type Deferred } from "./deferred.js";

/** One attempt a worker runs. */
export interface Running {
  job: Job;
  cancellation: AttemptCancellation;
  /** Epoch ms it was launched: what the worker registry shows as the job's start (worker/presence.ts). */
  startedAt: number;
  /**
   * Set when shutdown gave up on it (it was released) or the job was cancelled through the queue (the backend
   * already holds it cancelled): its outcome is ignored.
   */
  cancelled: boolean;
}

/**
 * A worker's slots: the attempts running, the jobs claimed ahead and buffered, and the slots reserved by
 * in-process hand-offs whose write is in flight. Every question about room is answered here, once.
 */
export class Slots {
  readonly running = new Map<string, Running>();
  readonly buffer: Job[] = [];
  /** Slots reserved by an in-process hand-off whose write is in flight (QueueBackend.offerSlots). */
  reserved = 0;
  private reservationsSettled: Deferred | null = null;

  constructor(readonly concurrency: number) {}

  /** Slots with nothing in them or waiting for them: what a claim may start now, what a hand-off may take. */
  free(): number {
    return Math.max(0, this.concurrency - this.running.size - this.buffer.length - this.reserved);
  }

  /** How many jobs a claim may take, the buffer's target (`prefetch`) included. */
  claimable(prefetch: number): number {
    return this.concurrency + prefetch - this.running.size - this.buffer.length - this.reserved;
  }

  /** Whether a buffered job may start: a slot reserved by a hand-off in flight is kept for it. */
  canStart(): boolean {
    return this.running.size + this.reserved < this.concurrency;
  }

  /** Reserves up to `wanted` free slots for a hand-off; how many it got. */
  reserve(wanted: number): number {
    const granted = Math.min(wanted, this.free());
    this.reserved += granted;
    return granted;
  }

  /** A hand-off's write is settled (delivered or failed): its reserved slots are no longer held for it. */
  settleReserved(count: number): void {
    this.reserved -= count;
    if (this.reserved === 0 && this.reservationsSettled) {
      this.reservationsSettled.resolve();
      this.reservationsSettled = null;
    }
  }

  /** Resolves once no hand-off is in flight (shutdown waits for them before it releases the buffer). */
  async noReservations(): Promise<void> {
    if (this.reserved > 0) await (this.reservationsSettled ??= createDeferred()).promise;
  }

  /** The jobs whose leases the worker holds: running (not given up) and buffered. */
  held(): string[] {
    const ids: string[] = [];
    for (const r of this.running.values()) if (!r.cancelled) ids.push(r.job.id);
    for (const job of this.buffer) ids.push(job.id);
    return ids;
  }

  /**
   * Jobs cancelled through the queue while the worker held them: buffered ones are dropped, running ones marked (their
   * outcome is ignored) and returned for their signals to be aborted.
   */
  cancel(ids: readonly string[]): Running[] {
    const cancelled = new Set(ids);
    const kept = this.buffer.filter((job) => !cancelled.has(job.id));
    if (kept.length < this.buffer.length) this.buffer.splice(0, this.buffer.length, ...kept);
    const marked: Running[] = [];
    for (const id of ids) {
      const entry = this.running.get(id);
      if (!entry || entry.cancelled) continue;
      entry.cancelled = true;
      marked.push(entry);
    }
    return marked;
  }
}
