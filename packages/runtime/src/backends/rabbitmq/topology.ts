import type { Channel } from "amqplib";
import { holdPattern, levelTtlMs, passPattern, routingKey, type CascadeShape } from "./delay-key.js";
import { ReplyCode, replyCode, topologyMismatch, queueTypeMismatch, workQueueMismatch } from "./errors.js";
import { MAX_MESSAGE_PRIORITY } from "./message.js";
import type { QueueNames } from "./names.js";

/**
 * The kind of broker queue every queue of the topology is (work, dead, delay levels). Classic: one node holds
 * the messages. Quorum: a Raft group over the cluster's nodes holds them, and a majority must have a message
 * before the broker confirms it, so a node loss loses nothing confirmed (docs/rabbitmq.md#queue-types).
 */
export const QueueType = {
  classic: "classic",
  quorum: "quorum",
} as const;
export type QueueType = (typeof QueueType)[keyof typeof QueueType];

/**
 * Declares everything one queue needs. Idempotent: every declaration is an assert, safe from several processes
 * at once and again after each reconnect.
 *
 *   work queue        durable queue (classic or quorum: QueueType), consumed by workers; a classic one is a
 *                     priority queue (x-max-priority 9: job priority 0 is message priority 9, docs/tasks.md#priority)
 *   dead queue        durable queue of the same type, never consumed by workers (listed and requeued by operators)
 *   level n (0..L-1)  topic exchange + durable queue, x-message-ttl = 2^n × unit, expired messages
 *                     dead-lettered to level n-1's exchange with their key (level 0: see below)
 *   bindings          exchange n → queue n       when bit n is 1   (holdPattern)
 *                     exchange n → exchange n-1  when bit n is 0   (passPattern)
 *                     exchange 0 → work queue    when bit 0 is 0
 *
 * Level 0 dead-letters to its own exchange with the all-zero key of L words, which the "bit 0 is 0" binding
 * sends to the work queue. That key also makes the level count part of a compared argument: RabbitMQ checks
 * x-message-ttl and x-dead-letter-routing-key on redeclaration, so a different unit or level count is refused
 * with PRECONDITION_FAILED. Level 0 is declared first so a mismatch is found before anything new is created.
 * The queue type is compared the same way (x-queue-type): a queue declared classic refuses to be declared
 * quorum and the other way round, reported as such with how to move (queueTypeMismatch).
 */
export async function declareTopology(
  channels: readonly Channel[],
  names: QueueNames,
  shape: CascadeShape,
  type: QueueType = QueueType.classic,
): Promise<void> {
  const mismatch = (error: unknown): never => {
    if (replyCode(error) !== ReplyCode.preconditionFailed) throw error;
    // x-queue-type, or an argument only quorum levels carry (RabbitMQ may compare those first).
    if (/x-queue-type|x-dead-letter-strategy|x-overflow/.test(error instanceof Error ? error.message : String(error))) {
      throw queueTypeMismatch(error, { queue: names.queue, type });
    }
    throw topologyMismatch(error, { queue: names.queue, ...shape });
  };
  await declareLevelQueue(channels[0]!, names, shape, 0, type).catch(mismatch);
  // A classic work queue declared before priorities (or by hand) without x-max-priority is refused with its own hint.
  await channels[0]!.assertQueue(names.work, { durable: true, arguments: workQueueArguments(type) }).catch((error: unknown) => {
    const text = error instanceof Error ? error.message : String(error);
    if (type === QueueType.classic && replyCode(error) === ReplyCode.preconditionFailed && /x-max-priority/.test(text)) {
      throw workQueueMismatch(error, { queue: names.queue });
    }
    return mismatch(error);
  });
  const levels = Array.from({ length: shape.levels }, (_, level) => level);
  await spread(channels, [
    (channel) => channel.assertQueue(names.dead, { durable: true, arguments: typeArguments(type) }).catch(mismatch),
    ...levels.slice(1).map((level) => (channel: Channel) => declareLevelQueue(channel, names, shape, level, type).catch(mismatch)),
    ...levels.map((level) => (channel: Channel) => channel.assertExchange(names.delayLevel(level), "topic", { durable: true })),
  ]);
  await spread(channels, [
    ...levels.map((level) => (channel: Channel) => channel.bindQueue(names.delayLevel(level), names.delayLevel(level), holdPattern(level, shape.levels))),
    ...levels.map((level) => (channel: Channel) =>
      level === 0
        ? channel.bindQueue(names.work, names.delayLevel(0), passPattern(0, shape.levels))
        : channel.bindExchange(names.delayLevel(level - 1), names.delayLevel(level), passPattern(level, shape.levels)),
    ),
  ]);
}

/**
 * Runs independent declarations over several channels at once. Durable declarations each wait for the
 * broker's metadata store; in parallel, setting up a fresh cascade takes a fraction of the time.
 */
async function spread(channels: readonly Channel[], work: Array<(channel: Channel) => Promise<unknown>>): Promise<void> {
  await Promise.all(
    channels.map(async (channel, index) => {
      for (let i = index; i < work.length; i += channels.length) await work[i]!(channel);
    }),
  );
}

/**
 * The work queue's arguments. A classic one is a priority queue: the broker delivers a higher message priority
 * first, and a job's priority is mapped onto it the other way round (message.ts messagePriority). Ten levels, one
 * per job priority. A quorum queue (RabbitMQ 3.10) refuses x-max-priority: priorities are not kept there.
 */
export function workQueueArguments(type: QueueType): Record<string, string | number> {
  return type === QueueType.quorum ? typeArguments(type) : { "x-max-priority": MAX_MESSAGE_PRIORITY };
}

/**
 * What a queue of `type` is declared with besides its own arguments. Classic declares none, as jfast always did:
 * a queue declared before queue_type existed has no x-queue-type, and RabbitMQ compares it on redeclaration.
 */
export function typeArguments(type: QueueType): Record<string, string> {
  return type === QueueType.quorum ? { "x-queue-type": QueueType.quorum } : {};
}

/**
 * A quorum level dead-letters at least once: the expired message leaves level n only once level n-1 (or the
 * work queue) has confirmed it, where the default (at most once) drops it if the node holding it goes away in
 * between. RabbitMQ applies the strategy only together with overflow = reject-publish; the levels set no length
 * limit, so nothing is ever rejected for it.
 */
const AT_LEAST_ONCE: Record<string, string> = { "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish" };

/** The arguments level n's queue is declared with; tests compare the broker's view against these. */
export function levelQueueArguments(names: QueueNames, shape: CascadeShape, level: number, type: QueueType = QueueType.classic): Record<string, string | number> {
  const typed = type === QueueType.quorum ? { ...typeArguments(type), ...AT_LEAST_ONCE } : {};
  return level === 0
    ? {
        ...typed,
        "x-message-ttl": levelTtlMs(0, shape.unitMs),
        "x-dead-letter-exchange": names.delayLevel(0),
        "x-dead-letter-routing-key": routingKey(0, shape.levels),
      }
    : {
        ...typed,
        "x-message-ttl": levelTtlMs(level, shape.unitMs),
        "x-dead-letter-exchange": names.delayLevel(level - 1),
      };
}

async function declareLevelQueue(channel: Channel, names: QueueNames, shape: CascadeShape, level: number, type: QueueType): Promise<void> {
  await channel.assertQueue(names.delayLevel(level), { durable: true, arguments: levelQueueArguments(names, shape, level, type) });
}
