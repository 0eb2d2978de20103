import type { Channel } from "amqplib";
import { holdPattern, levelTtlMs, passPattern, routingKey, type CascadeShape } from "./delay-key.js";
import { ReplyCode, replyCode, topologyMismatch, workQueueMismatch } from "./errors.js";
import { MAX_MESSAGE_PRIORITY } from "./message.js";
import type { QueueNames } from "./names.js";

/**
 * Declares everything one queue needs. Idempotent: every declaration is an assert, safe from several processes
 * at once and again after each reconnect.
 *
 *   work queue        durable classic priority queue (x-max-priority 9: job priority 0 is message priority 9,
 *                     docs/tasks.md#priority), consumed by workers
 *   dead queue        durable classic queue, never consumed by workers (listed and requeued by operators)
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
 */
export async function declareTopology(channels: readonly Channel[], names: QueueNames, shape: CascadeShape): Promise<void> {
  const mismatch = (error: unknown): never => {
    if (replyCode(error) === ReplyCode.preconditionFailed) throw topologyMismatch(error, { queue: names.queue, ...shape });
    throw error;
  };
  await declareLevelQueue(channels[0]!, names, shape, 0).catch(mismatch);
  // A work queue declared before priorities (or by hand) without x-max-priority is refused the same way.
  await channels[0]!.assertQueue(names.work, { durable: true, arguments: workQueueArguments() }).catch((error: unknown) => {
    if (replyCode(error) === ReplyCode.preconditionFailed) throw workQueueMismatch(error, { queue: names.queue });
    throw error;
  });
  const levels = Array.from({ length: shape.levels }, (_, level) => level);
  await spread(channels, [
    (channel) => channel.assertQueue(names.dead, { durable: true }),
    ...levels.slice(1).map((level) => (channel: Channel) => declareLevelQueue(channel, names, shape, level).catch(mismatch)),
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
 * The work queue's arguments. A priority queue: the broker delivers a higher message priority first, and a job's
 * priority is mapped onto it the other way round (message.ts messagePriority). Ten levels, one per job priority.
 */
export function workQueueArguments(): Record<string, number> {
  return { "x-max-priority": MAX_MESSAGE_PRIORITY };
}

/** The arguments level n's queue is declared with; tests compare the broker's view against these. */
export function levelQueueArguments(names: QueueNames, shape: CascadeShape, level: number): Record<string, string | number> {
  return level === 0
    ? {
        "x-message-ttl": levelTtlMs(0, shape.unitMs),
        "x-dead-letter-exchange": names.delayLevel(0),
        "x-dead-letter-routing-key": routingKey(0, shape.levels),
      }
    : {
        "x-message-ttl": levelTtlMs(level, shape.unitMs),
        "x-dead-letter-exchange": names.delayLevel(level - 1),
      };
}

async function declareLevelQueue(channel: Channel, names: QueueNames, shape: CascadeShape, level: number): Promise<void> {
  await channel.assertQueue(names.delayLevel(level), { durable: true, arguments: levelQueueArguments(names, shape, level) });
}
