import type { Job } from "../../core/job.js";
import type { Delivery } from "./subscription.js";

/**
 * The consumer's lease table: deliveries claimed by a worker of this process, each with its in-process lease
 * (the visibility timeout). A delivery whose lease is not extended in time is given back (`expired`, a nack),
 * and the broker redelivers it as a lost attempt.
 */
export class Leases {
  /** Each held delivery and the job it was claimed as. */
  private readonly held = new Map<Delivery, Job>();
  /**
   * The same, by job: the worker settles a job with the Job it was given. A Map emptied as deliveries settle, not
   * a WeakMap: every delivery paid a weak entry, work for the garbage collector.
   */
  private readonly byJob = new Map<Job, Delivery>();
  /**
   * One timer for the table, set for the earliest lease to end (a timer per delivery cost every job a timer
   * made and cleared); when it fires, every lease past its end is given back and it is set for the next.
   */
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly expired: (delivery: Delivery) => void) {}

  get count(): number {
    return this.held.size;
  }

  deliveries(): readonly Delivery[] {
    return [...this.held.keys()];
  }

  /** `delivery` is now `job`, claimed by `workerId` until `now + leaseMs`. */
  hold(delivery: Delivery, job: Job, params: { workerId: string; now: number; leaseMs: number }): void {
    delivery.workerId = params.workerId;
    this.held.set(delivery, job);
    this.lease(delivery, params.now + params.leaseMs);
    this.byJob.set(job, delivery);
  }

  extend(params: { workerId: string; jobIds: string[]; leaseMs: number }): void {
    const ids = new Set(params.jobIds);
    const until = Date.now() + params.leaseMs;
    for (const delivery of this.held.keys()) {
      if (delivery.workerId === params.workerId && ids.has(delivery.json.id)) this.lease(delivery, until);
    }
  }

  /**
   * Takes a claimed delivery out of the lease table so exactly one outcome settles it. Null when this worker
   * no longer holds it: its lease expired, its connection dropped, or another worker holds it now.
   */
  take(workerId: string, job: Job): Delivery | null {
    const delivery = this.byJob.get(job) ?? [...this.held.keys()].find((d) => d.json.id === job.id && d.workerId === workerId);
    if (!delivery || delivery.settled || delivery.workerId !== workerId || !delivery.sub.alive) return null;
    this.settle(delivery);
    return delivery;
  }

  /**
   * Puts back a delivery take() took, when its outcome could not be written (the store unreachable for a while):
   * held again by the same worker under the lease it had, so the worker's next try of the write finds it, and
   * the lease, not the failure, decides when it goes back to the broker. False when its channel is gone.
   */
  restore(delivery: Delivery, job: Job): boolean {
    if (!delivery.sub.alive || !delivery.settled || delivery.workerId === null) return false;
    delivery.settled = false;
    this.held.set(delivery, job);
    this.byJob.set(job, delivery);
    this.lease(delivery, delivery.lockedUntil ?? Date.now());
    return true;
  }

  /** take() by job id: a delivery this worker holds, for an outcome decided without the Job (a cancellation). */
  takeById(workerId: string, id: string): Delivery | null {
    const delivery = [...this.held.keys()].find((d) => d.json.id === id && d.workerId === workerId && !d.settled);
    if (!delivery || !delivery.sub.alive) return null;
    this.settle(delivery);
    return delivery;
  }

  /** The channel of these deliveries is gone: the broker requeues them, and a late outcome is ignored. */
  drop(matches: (delivery: Delivery) => boolean): void {
    for (const delivery of [...this.held.keys()]) if (matches(delivery)) this.settle(delivery);
  }

  clearTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private lease(delivery: Delivery, until: number): void {
    delivery.lockedUntil = until;
    this.wakeAt(until);
  }

  private wakeAt(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.expire, Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  /**
   * The earliest lease ran out: every delivery whose lease ended with no heartbeat goes back to the broker, which
   * redelivers it as a lost attempt. Timers run on the monotonic clock, lockedUntil on the wall clock; the two
   * disagree by a millisecond of rounding (more while NTP slews), so the timer can fire a little early: a lease
   * not ended yet sets it again rather than stay held for good.
   */
  private readonly expire = (): void => {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const delivery of [...this.held.keys()]) {
      const until = delivery.lockedUntil ?? 0;
      if (until > now) {
        next = Math.min(next, until);
        continue;
      }
      this.settle(delivery);
      this.expired(delivery);
    }
    if (next !== Number.POSITIVE_INFINITY) this.wakeAt(next);
  };

  private settle(delivery: Delivery): void {
    delivery.settled = true;
    // The timer stays: at worst it wakes once for a table with nothing left to give back.
    const job = this.held.get(delivery);
    this.held.delete(delivery);
    if (job !== undefined && this.byJob.get(job) === delivery) this.byJob.delete(job);
  }
}
