import type { Channel, ConsumeMessage } from "amqplib";
import type { JobJSON } from "../../core/job.js";
import type { AckWindow } from "./ack-window.js";
import type { Session } from "./connection.js";

/**
 * Prefetch is per consumer (basic.qos with global = false): quorum queues refuse a consumer on a channel with a
 * channel-wide limit (NOT_IMPLEMENTED, which closes the connection). A per-consumer limit is fixed when the
 * consumer starts and RabbitMQ ignores a later basic.qos, so a new level takes effect by starting a new
 * consumer on the same channel with it and then cancelling the old one (retune()). Its unacked deliveries
 * stay on the channel: delivery tags are the channel's, so they are acked as before.
 *
 * Not on a quorum queue (ConsumerOptions.neverCancel): when the node a client is connected to dies, the queue's
 * leader gives back the unacked messages of that node's consumers only if they were still consuming; those of a
 * cancelled consumer stay checked out to it until the dead node comes back (RabbitMQ 3.10.8: after a retune just
 * before a kill -9 the worker stopped draining, 97 messages unacked for a consumer of the dead node). There a level is
 * raised by adding a consumer for the difference (the limits of a channel's consumers add up), and never lowered
 * while the channel lives; a new connection starts over with one consumer at the current level.
 */
export const CHANNEL_WIDE = false;

/** One subscription to the work queue: a channel with a consumer on it. Dies with its channel. */
export interface Subscription {
  readonly session: Session;
  readonly channel: Channel;
  tag: string | null;
  /** Consumers started before `tag` and still consuming (quorum queues: see neverCancel). */
  readonly moreTags: string[];
  alive: boolean;
  /** The prefetch its consumer was started with (with neverCancel, of its consumers together). */
  prefetch: number;
  /** The last retune (new consumer, old one cancelled); they run one after another. */
  retuning: Promise<void>;
  /** Its acks, sent together at the end of each turn of the event loop (ack-window.ts). */
  readonly acks: AckWindow;
}

/** A message the broker pushed to us and we have not settled (acked or nacked) yet. */
export interface Delivery {
  readonly sub: Subscription;
  readonly message: ConsumeMessage;
  /** The job as published: `attempts` counts attempts spent before this delivery. */
  readonly json: JobJSON;
  workerId: string | null;
  lockedUntil: number | null;
  settled: boolean;
}


/** An added consumer (neverCancel) adds at least this share of the channel's prefetch, so they stay few. */
const MIN_GROWTH = 0.25;

/**
 * A retune for neverCancel: a consumer added (`consume`) for the difference; a lower level waits for a new
 * channel.
 */
export async function grow(sub: Subscription, prefetch: number, consume: () => Promise<{ consumerTag: string }>): Promise<void> {
  if (prefetch <= sub.prefetch) return;
  const add = Math.max(prefetch - sub.prefetch, Math.ceil(sub.prefetch * MIN_GROWTH));
  try {
    // Both sent in this turn, so no other basic.qos (a barrier) comes between them on the channel.
    const qos = sub.channel.prefetch(add, CHANNEL_WIDE);
    const consuming = consume();
    // Both awaited together: when the connection dies, amqplib rejects both replies, and the one not awaited
    // would be an unhandled rejection.
    const [, { consumerTag }] = await Promise.all([qos, consuming]);
    if (sub.tag) sub.moreTags.push(sub.tag);
    sub.tag = consumerTag;
    sub.prefetch += add;
  } catch {
    // The channel closed meanwhile: subscriptionEnded() starts over on the next claim.
  }
}
