import type { ConsumeMessage } from "amqplib";
import { claimedJob, type Job } from "../../core/job.js";
import { classifyArrival, type Arrival } from "./arrival.js";
import type { BackendLogger, BrokerConnection, Session } from "./connection.js";
import { Leases } from "./leases.js";
import { CHANNEL_WIDE, grow, type Delivery, type Subscription } from "./subscription.js";
import type { QueueNames } from "./names.js";
import { PrefetchLevel } from "./prefetch-level.js";
import { AckWindow } from "./ack-window.js";

export interface ConsumerOptions {
  connection: BrokerConnection;
  names: QueueNames;
  /**
   * Deals with an arrival that is not handed to a worker (lost attempt, early, unreadable) by publishing what
   * replaces it. Resolves when the original may be acked; a rejection leaves it to be delivered again.
   */
  repair: (arrival: Exclude<Arrival, { kind: "ready" }>, message: ConsumeMessage) => Promise<void>;
  /** A job cancelled while its message waited: acked and dropped instead of handed out. */
  isCancelled?: ((id: string) => boolean) | undefined;
  logger?: BackendLogger | undefined;
  /**
   * Never cancel a consumer while its channel lives, so each one holding deliveries is still consuming if the
   * connection dies (quorum queues: see CHANNEL_WIDE). A level then only grows, by an added consumer.
   */
  neverCancel?: boolean | undefined;
}

/**
 * The worker side of the work queue. The broker pushes messages to one consumer per backend with manual
 * acks; `claim` hands out what was pushed. A delivery stays unacked while its job runs, so the broker's own
 * redelivery is the lease: if the connection or channel goes away, the broker requeues every unacked message
 * and the next receiver sees `redelivered` and counts the lost attempt (see arrival.ts).
 *
 * Prefetch: the consumer starts on the first claim (or wait). Its prefetch is the largest `limit` a claim has
 * asked for (the worker's first claim asks for all its slots) plus the claim's `pushAhead`, the worker's
 * prefetch target: with short jobs the broker then has the next ones on the wire while these run, instead of
 * one round trip per finished job. Raised at once, lowered once the target stays well below it for a second
 * (prefetch-level.ts); on a quorum queue not lowered while the channel lives (see CHANNEL_WIDE). A process
 * that only enqueues never consumes.
 *
 * In-process lease: `leaseMs` (the visibility timeout) still applies inside a live process. A delivery whose
 * lease is not extended in time is nacked back to the broker, which redelivers it as a lost attempt.
 */
export class Consumer {
  private readonly options: ConsumerOptions;
  private readonly level = new PrefetchLevel();
  /** The largest claim so far: a worker's first claim asks for all its slots. */
  private slots = 0;
  private sub: Subscription | null = null;
  private readonly opening = new WeakMap<Session, Promise<void>>();
  private readonly buffer: Delivery[] = [];
  /** Deliveries claimed by a worker of this process, each under its lease. */
  private readonly leases = new Leases((delivery) => this.nack(delivery));
  private readonly waiters = new Set<() => void>();
  private readonly repairs = new Set<Promise<void>>();
  /** Job ids whose replacement is being published; their deliveries wait in `parked` (see replace()). */
  private readonly replacing = new Map<string, number>();
  private readonly parked: Delivery[] = [];
  private closing = false;

  constructor(options: ConsumerOptions) {
    this.options = options;
  }

  get isConsuming(): boolean {
    return this.prefetch > 0;
  }

  get bufferedCount(): number {
    return this.buffer.length;
  }

  get heldCount(): number {
    return this.leases.count;
  }

  heldDeliveries(): readonly Delivery[] {
    return this.leases.deliveries();
  }

  bufferedDeliveries(): readonly Delivery[] {
    return [...this.buffer];
  }

  async claim(params: { workerId: string; limit: number; leaseMs: number; pushAhead?: number }): Promise<Job[]> {
    if (params.limit <= 0 || this.closing) return [];
    // Consuming already at the level wanted (every claim of a busy worker): nothing to wait for.
    const starting = this.ensureConsuming(params.limit, Math.max(0, params.pushAhead ?? 0));
    if (starting) await starting;
    // Messages the broker already dispatched may still be on the wire: a round trip on the consuming channel
    // returns after them (the broker writes a channel's frames in order), so a job enqueued and confirmed
    // before this claim is in the buffer by the time we look.
    if (this.buffer.length === 0) await this.barrier();
    const now = Date.now();
    const jobs: Job[] = [];
    while (jobs.length < params.limit && this.buffer.length > 0) {
      const delivery = this.buffer.shift()!;
      if (!delivery.sub.alive) continue;
      if (this.options.isCancelled?.(delivery.json.id)) {
        this.ack(delivery);
        continue;
      }
      const job = claimedJob(delivery.json);
      this.leases.hold(delivery, job, { workerId: params.workerId, now, leaseMs: params.leaseMs });
      jobs.push(job);
    }
    return jobs;
  }



  extend(params: { workerId: string; jobIds: string[]; leaseMs: number }): void {
    this.leases.extend(params);
  }

  /**
   * Takes a claimed delivery out of the lease table so exactly one outcome settles it. Null when this worker
   * no longer holds it: its lease expired, its connection dropped, or another worker holds it now.
   */
  take(workerId: string, job: Job): Delivery | null {
    return this.leases.take(workerId, job);
  }

  /** Holds a taken delivery again after its outcome failed to be written (Leases.restore); else nacks it back. */
  restore(delivery: Delivery, job: Job): void {
    if (!this.leases.restore(delivery, job)) this.nack(delivery);
  }

  /** take() by job id: a delivery this worker holds, for an outcome decided without the Job (a cancellation). */
  takeById(workerId: string, id: string): Delivery | null {
    return this.leases.takeById(workerId, id);
  }

  ack(delivery: Delivery): void {
    this.settleMessage(delivery.sub, delivery.message, "ack");
  }

  nack(delivery: Delivery): void {
    this.settleMessage(delivery.sub, delivery.message, "nack");
  }

  /**
   * Replaces deliveries by new messages: `publish` publishes the replacements (confirmed), then the originals
   * are acked, and a round trip makes sure the broker has the acks. Until then any delivery of the same job ids
   * is parked, not handed out. Without this, a replacement could start running while its original is still
   * unacked; a process killed at that moment would leave both to be redelivered, and the job would fork into
   * two copies with their own attempt counts (a poison pill would then outlive max_attempts).
   * If publishing fails the originals are nacked back (they return as lost attempts) and the error is thrown.
   */
  async replace(
    ids: string[],
    originals: Array<{ sub: Subscription; message: ConsumeMessage }>,
    publish: () => Promise<void>,
    options: { nackAfterMs?: number } = {},
  ): Promise<void> {
    for (const id of ids) this.replacing.set(id, (this.replacing.get(id) ?? 0) + 1);
    try {
      try {
        await publish();
      } catch (error) {
        // Not at once when asked: a broker refusing the publish would otherwise bounce a message in a tight loop.
        if (options.nackAfterMs) await new Promise((resolve) => setTimeout(resolve, options.nackAfterMs));
        for (const o of originals) this.settleMessage(o.sub, o.message, "nack");
        throw error;
      }
      for (const o of originals) this.settleMessage(o.sub, o.message, "ack");
      const subs = new Set(originals.map((o) => o.sub));
      // The acks go out now, ahead of the round trip that confirms them.
      for (const sub of subs) sub.acks.flush();
      await Promise.all([...subs].map((sub) => (sub.alive ? sub.channel.prefetch(this.prefetch, CHANNEL_WIDE).catch(() => undefined) : undefined)));
    } finally {
      for (const id of ids) {
        const n = (this.replacing.get(id) ?? 1) - 1;
        if (n > 0) this.replacing.set(id, n);
        else this.replacing.delete(id);
      }
      this.unpark();
    }
  }

  /** Resolves when a job is buffered, after `timeoutMs`, on abort, or on close. Never polls. */
  wait(params: { signal: AbortSignal; timeoutMs: number }): Promise<void> {
    if (params.signal.aborted || this.closing) return Promise.resolve();
    if (this.prefetch === 0) void this.ensureConsuming(1, 0)?.catch(() => undefined);
    if (this.buffer.length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        params.signal.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, params.timeoutMs);
      params.signal.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
  }

  /** A round trip on the consuming channel; deliveries dispatched before it are buffered when it returns. */
  async barrier(): Promise<void> {
    const sub = this.sub;
    if (!sub?.alive) return;
    await sub.channel.prefetch(this.prefetch, CHANNEL_WIDE).catch(() => undefined);
  }

  /** Subscribes on a new connection (called before the connection is handed to anyone). */
  async onSession(session: Session): Promise<void> {
    if (this.prefetch > 0 && !this.closing) await this.subscribeOn(session);
  }

  /** The connection is gone: the broker requeues everything it held, so forget it here. */
  onLost(session: Session): void {
    if (this.sub?.session === session) this.subscriptionEnded(this.sub);
  }

  /**
   * Stops consuming and hands back what was pushed but never claimed, for the backend to return to the queue
   * without spending an attempt. Waits for repairs in flight.
   */
  async close(): Promise<Delivery[]> {
    this.closing = true;
    for (const waiter of [...this.waiters]) waiter();
    const sub = this.sub;
    sub?.acks.flush();
    await sub?.retuning;
    if (sub?.alive) {
      for (const tag of [...sub.moreTags, ...(sub.tag ? [sub.tag] : [])]) await sub.channel.cancel(tag).catch(() => undefined);
    }
    await Promise.allSettled([...this.repairs]);
    this.leases.clearTimers();
    return [...this.buffer.splice(0), ...this.parked.splice(0)].filter((d) => d.sub.alive);
  }

  /** The channel's prefetch: 0 until the first claim or wait starts consuming. */
  private get prefetch(): number {
    return this.level.value;
  }

  /** Starts consuming, or brings the prefetch to what this claim wants; null when there is nothing to wait for. */
  private ensureConsuming(limit: number, ahead: number): Promise<void> | null {
    this.slots = Math.max(this.slots, limit);
    // Raised at once; lowered only once well below for a while (prefetch-level.ts).
    const change = this.level.want(this.slots + ahead, performance.now());
    if (this.sub?.alive) return change ? this.retune(this.sub) : null;
    return this.options.connection.session("consume the work queue").then((session) => this.subscribeOn(session));
  }

  /**
   * Brings the subscription's consumer to the current prefetch: a new consumer with the new limit, then the old
   * one cancelled (see CHANNEL_WIDE). For the moment both exist the broker may push up to both limits; the
   * messages of either arrive in the same buffer. Runs after any retune in flight, so tags never cross.
   */
  private retune(sub: Subscription): Promise<void> {
    sub.retuning = sub.retuning.then(async () => {
      const prefetch = this.prefetch;
      if (!sub.alive || this.closing || sub.prefetch === prefetch) return;
      if (this.options.neverCancel) return grow(sub, prefetch, () => sub.channel.consume(this.options.names.work, (message) => this.arrive(sub, message), { noAck: false }));
      try {
        await sub.channel.prefetch(prefetch, CHANNEL_WIDE);
        const { consumerTag } = await sub.channel.consume(this.options.names.work, (message) => this.arrive(sub, message), { noAck: false });
        const old = sub.tag;
        sub.tag = consumerTag;
        sub.prefetch = prefetch;
        if (old) await sub.channel.cancel(old);
      } catch {
        // The channel closed meanwhile: subscriptionEnded() starts over on the next claim.
      }
    });
    return sub.retuning;
  }

  private subscribeOn(session: Session): Promise<void> {
    let opening = this.opening.get(session);
    if (!opening) {
      opening = this.subscribe(session);
      this.opening.set(session, opening);
      opening.catch(() => this.opening.delete(session));
    }
    return opening;
  }

  private async subscribe(session: Session): Promise<void> {
    const channel = await session.model.createChannel();
    const sub: Subscription = {
      session,
      channel,
      tag: null,
      moreTags: [],
      alive: true,
      prefetch: this.prefetch,
      retuning: Promise.resolve(),
      acks: new AckWindow((tag, multiple) => {
        if (!sub.alive) return;
        try {
          channel.ack({ fields: { deliveryTag: tag } } as ConsumeMessage, multiple);
        } catch {
          // The channel closed meanwhile: the broker requeues the messages; they come back as lost attempts.
        }
      }),
    };
    channel.on("error", (error: Error) => this.options.logger?.warn("the RabbitMQ consuming channel failed", { error: error.message }));
    channel.on("close", () => this.subscriptionEnded(sub));
    await channel.prefetch(sub.prefetch, CHANNEL_WIDE);
    this.sub = sub;
    const { consumerTag } = await channel.consume(this.options.names.work, (message) => this.arrive(sub, message), { noAck: false });
    sub.tag = consumerTag;
    // A claim may have raised the level while this consumer was starting.
    if (sub.prefetch !== this.prefetch) await this.retune(sub);
  }

  private arrive(sub: Subscription, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (the queue was deleted): subscribe again once it exists.
      this.options.logger?.warn("the broker cancelled the consumer of the work queue; subscribing again", { queue: this.options.names.work });
      void sub.channel.close().catch(() => undefined);
      this.subscriptionEnded(sub);
      return;
    }
    sub.acks.delivered(message.fields.deliveryTag);
    const arrival = classifyArrival(message, Date.now());
    if (arrival.kind === "ready") {
      const delivery: Delivery = { sub, message, json: arrival.json, workerId: null, lockedUntil: null, settled: false };
      if (this.replacing.has(arrival.json.id)) {
        this.parked.push(delivery);
        return;
      }
      this.buffer.push(delivery);
      for (const waiter of [...this.waiters]) waiter();
      return;
    }
    const ids = arrival.kind === "unreadable" ? [] : [arrival.json.id];
    const repair = this.replace(ids, [{ sub, message }], () => this.options.repair(arrival, message), { nackAfterMs: 1000 }).catch(
      (error: unknown) => {
        this.options.logger?.error("could not re-route a message from the work queue; it will be delivered again", {
          error: (error as Error).message,
          kind: arrival.kind,
        });
      },
    );
    this.repairs.add(repair);
    void repair.finally(() => this.repairs.delete(repair));
  }

  private settleMessage(sub: Subscription, message: ConsumeMessage, how: "ack" | "nack"): void {
    if (!sub.alive) return;
    const tag = message.fields.deliveryTag;
    if (how === "ack") {
      sub.acks.ack(tag);
      // Closing: the channel may close before the end of this turn.
      if (this.closing) sub.acks.flush();
      return;
    }
    try {
      sub.channel.nack(message, false, true);
      sub.acks.settledElsewhere(tag);
    } catch {
      // The channel closed meanwhile: the broker requeues the message; it comes back as a lost attempt.
    }
  }

  private unpark(): void {
    let woke = false;
    for (let i = 0; i < this.parked.length; ) {
      const delivery = this.parked[i]!;
      if (!delivery.sub.alive) this.parked.splice(i, 1);
      else if (!this.replacing.has(delivery.json.id)) {
        this.parked.splice(i, 1);
        this.buffer.push(delivery);
        woke = true;
      } else i++;
    }
    if (woke) for (const waiter of [...this.waiters]) waiter();
  }



  private subscriptionEnded(sub: Subscription): void {
    if (!sub.alive) return;
    sub.alive = false;
    this.opening.delete(sub.session);
    if (this.sub === sub) this.sub = null;
    // The broker requeues whatever this channel held; our copies are void (a late outcome is ignored).
    for (let i = this.buffer.length - 1; i >= 0; i--) if (this.buffer[i]!.sub === sub) this.buffer.splice(i, 1);
    for (let i = this.parked.length - 1; i >= 0; i--) if (this.parked[i]!.sub === sub) this.parked.splice(i, 1);
    this.leases.drop((delivery) => delivery.sub === sub);
    if (!this.closing && this.prefetch > 0 && sub.session.alive) {
      // Only the channel died (consumer_timeout, a cancelled consumer): subscribe again on the same connection.
      setTimeout(() => {
        if (this.closing || this.sub?.alive || !sub.session.alive) return;
        this.subscribeOn(sub.session).catch((error: unknown) =>
          this.options.logger?.warn("could not subscribe to the work queue again", { error: (error as Error).message }),
        );
      }, 500).unref();
    }
  }
}


export type { Delivery, Subscription } from "./subscription.js";
