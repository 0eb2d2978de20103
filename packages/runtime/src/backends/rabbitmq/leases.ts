import type { Job } from "../../core/job.js";
import type { Delivery } from "./subscription.js";

/**
 * The consumer's lease table: deliveries claimed by a worker of this process, each with its in-process lease
 * (the visibility timeout). A delivery whose lease is not extended in time is given back (`expired`, a nack),
 * and the broker redelivers it as a lost attempt.
 */
export class Leases {
  private readonly held = new Set<Delivery>();
  private readonly byJob = new WeakMap<Job, Delivery>();

  constructor(private readonly expired: (delivery: Delivery) => void) {}

  get count(): number {
    return this.held.size;
  }

  deliveries(): readonly Delivery[] {
    return [...this.held];
  }

  /** `delivery` is now `job`, claimed by `workerId` until `now + leaseMs`. */
  hold(delivery: Delivery, job: Job, params: { workerId: string; now: number; leaseMs: number }): void {
    delivery.workerId = params.workerId;
    this.lease(delivery, params.now + params.leaseMs, params.leaseMs);
    this.held.add(delivery);
    this.byJob.set(job, delivery);
  }

  extend(params: { workerId: string; jobIds: string[]; leaseMs: number }): void {
    const ids = new Set(params.jobIds);
    const until = Date.now() + params.leaseMs;
    for (const delivery of this.held) {
      if (delivery.workerId === params.workerId && ids.has(delivery.json.id)) this.lease(delivery, until, params.leaseMs);
    }
  }

  /**
   * Takes a claimed delivery out of the lease table so exactly one outcome settles it. Null when this worker
   * no longer holds it: its lease expired, its connection dropped, or another worker holds it now.
   */
  take(workerId: string, job: Job): Delivery | null {
    const delivery = this.byJob.get(job) ?? [...this.held].find((d) => d.json.id === job.id && d.workerId === workerId);
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
    this.held.add(delivery);
    this.byJob.set(job, delivery);
    const until = delivery.lockedUntil ?? Date.now();
    this.lease(delivery, until, until - Date.now());
    return true;
  }

  /** take() by job id: a delivery this worker holds, for an outcome decided without the Job (a cancellation). */
  takeById(workerId: string, id: string): Delivery | null {
    const delivery = [...this.held].find((d) => d.json.id === id && d.workerId === workerId && !d.settled);
    if (!delivery || !delivery.sub.alive) return null;
    this.settle(delivery);
    return delivery;
  }

  /** The channel of these deliveries is gone: the broker requeues them, and a late outcome is ignored. */
  drop(matches: (delivery: Delivery) => boolean): void {
    for (const delivery of [...this.held]) if (matches(delivery)) this.settle(delivery);
  }

  clearTimers(): void {
    for (const delivery of this.held) if (delivery.timer) clearTimeout(delivery.timer);
  }

  private lease(delivery: Delivery, until: number, leaseMs: number): void {
    delivery.lockedUntil = until;
    if (delivery.timer) clearTimeout(delivery.timer);
    delivery.timer = setTimeout(() => this.expire(delivery), Math.max(0, leaseMs));
    delivery.timer.unref();
  }

  /** The lease ran out with no heartbeat: give the message back; the broker redelivers it as a lost attempt. */
  private expire(delivery: Delivery): void {
    if (delivery.settled) return;
    const left = (delivery.lockedUntil ?? 0) - Date.now();
    if (left > 0) {
      // Timers run on the monotonic clock, lockedUntil on the wall clock; the two disagree by a millisecond of
      // rounding (more while NTP slews), so a timer can fire a little early: wait out the rest rather than
      // leave the delivery held for good.
      this.lease(delivery, delivery.lockedUntil!, left);
      return;
    }
    this.settle(delivery);
    this.expired(delivery);
  }

  private settle(delivery: Delivery): void {
    delivery.settled = true;
    this.held.delete(delivery);
    if (delivery.timer) clearTimeout(delivery.timer);
    delivery.timer = null;
  }
}
