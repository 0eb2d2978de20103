import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from "kafkajs";
import { backoffDelayMs } from "../core/backoff.js";
import type { Event } from "../core/event.js";
import type { AppContext } from "../core/task.js";
import { withRequest, type RequestContext } from "../context/context.js";
import type { Logger } from "../observability/logger.js";
import { BlockedPartitions } from "./blocked-partitions.js";
import type { EventHandlerDefinition } from "./on.js";
import { decodeEvent } from "./wire.js";

/**
 * The consumer behind `on(...)` handlers: one consumer group per service, auto-commit off.
 *
 * Invariant: the committed offset of a partition never passes a message that has not been handled by every
 * handler of its topic. Messages of a partition are handled one after another; after a batch, the offset
 * after the last handled message is committed. A failing message stops its batch, is not resolved (so the
 * next fetch starts at it again), and pauses its partition for a backoff before the retry. Later messages of
 * that partition wait behind it — ordering by key holds, and nothing is skipped in silence — while the other
 * partitions keep flowing. The blocked partition is listed in the events health check until it goes through.
 */

export type ConsumerState = "starting" | "running" | "crashed" | "stopped";

export interface EventConsumer {
  start(): Promise<void>;
  stop(): Promise<void>;
  state(): ConsumerState;
  lastError(): string | null;
  readonly blocked: BlockedPartitions;
}

/** Retry of a blocked message: 1 s, 2 s, 4 s ... capped at 30 s, retried as long as it keeps failing. */
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** How long start() waits for the first group join before reporting the consumer as not ready. */
const JOIN_TIMEOUT_MS = 30_000;
/** Partitions handled at the same time; each partition is still handled strictly in order. */
const PARTITIONS_CONCURRENTLY = 4;

export function createEventConsumer(params: {
  kafka: Kafka;
  groupId: string;
  handlers: readonly EventHandlerDefinition[];
  context: AppContext;
  logger: Logger;
}): EventConsumer {
  const { logger, groupId } = params;
  const byTopic = new Map<string, EventHandlerDefinition[]>();
  for (const definition of params.handlers) {
    byTopic.set(definition.topic, [...(byTopic.get(definition.topic) ?? []), definition]);
  }
  const blocked = new BlockedPartitions();
  const retryTimers = new Set<NodeJS.Timeout>();
  let consumer: Consumer | null = null;
  let state: ConsumerState = "stopped";
  let lastError: string | null = null;
  let joined: (() => void) | null = null;

  async function deliver(topic: string, partition: number, message: KafkaMessage, heartbeat: () => Promise<void>): Promise<
    { ok: true } | { ok: false; retryInMs: number }
  > {
    let event: Event | null = null;
    const succeeded = blocked.succeeded(topic, partition, message.offset);
    let current: EventHandlerDefinition | null = null;
    try {
      event = decodeEvent(message.value);
      for (const definition of byTopic.get(topic) ?? []) {
        if (succeeded.has(definition.name!)) continue;
        current = definition;
        const tools = { ctx: params.context, topic, partition, offset: message.offset, heartbeat };
        const handled = event;
        await withRequest(contextOf(handled), () => definition.handler(handled, tools));
        succeeded.add(definition.name!);
      }
    } catch (error) {
      const attempt = blocked.attempts(topic, partition, message.offset) + 1;
      const retryInMs = backoffDelayMs(attempt, { baseMs: RETRY_BASE_MS, maxMs: RETRY_MAX_MS });
      const entry = blocked.fail({ topic, partition, offset: message.offset, event, handler: current?.name ?? null, error, retryInMs, succeeded });
      const log = () =>
        logger.error(`event handler failed: partition ${topic}[${partition}] is blocked at offset ${message.offset} until it succeeds`, {
          topic,
          partition,
          offset: message.offset,
          consumer_group: groupId,
          event_id: entry.eventId,
          event_type: entry.eventType,
          handler: entry.handler,
          attempt,
          retry_in_ms: retryInMs,
          error,
        });
      if (event) withRequest(contextOf(event), log);
      else log();
      return { ok: false, retryInMs };
    }
    if (blocked.clear(topic, partition)) {
      logger.info(`partition ${topic}[${partition}] flows again: offset ${message.offset} was handled`, { topic, partition, consumer_group: groupId });
    }
    return { ok: true };
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale, pause } = payload;
    const { topic, partition } = batch;
    let handled: string | null = null;
    try {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        const outcome = await deliver(topic, partition, message, heartbeat);
        if (!outcome.ok) {
          // Not resolved: the next fetch of this partition starts at the failing message again.
          const resume = pause();
          const timer = setTimeout(() => {
            retryTimers.delete(timer);
            resume();
          }, outcome.retryInMs);
          retryTimers.add(timer);
          break;
        }
        resolveOffset(message.offset);
        handled = message.offset;
        await heartbeat();
      }
    } finally {
      if (handled !== null) {
        // Kafka's committed offset is the next message to read, hence + 1.
        await payload.commitOffsetsIfNecessary({
          topics: [{ topic, partitions: [{ partition, offset: (BigInt(handled) + 1n).toString() }] }],
        });
      }
    }
  }

  return {
    blocked,
    state: () => state,
    lastError: () => lastError,
    async start() {
      state = "starting";
      const created = params.kafka.consumer({
        groupId,
        allowAutoTopicCreation: true,
        // Short long-polls: a paused partition's retry and stop() are not held up by an idle fetch.
        maxWaitTimeInMs: 500,
      });
      consumer = created;
      const joinedOnce = new Promise<void>((resolve) => (joined = resolve));
      created.on(created.events.GROUP_JOIN, (e) => {
        state = "running";
        lastError = null;
        blocked.retain(new Map(Object.entries(e.payload.memberAssignment)));
        joined?.();
      });
      created.on(created.events.CRASH, (e) => {
        lastError = e.payload.error?.message ?? String(e.payload.error);
        state = e.payload.restart ? "starting" : "crashed";
        logger.error(`the events consumer crashed${e.payload.restart ? "; kafkajs restarts it" : " and stopped"}: ${lastError}`, {
          consumer_group: groupId,
        });
      });
      await created.connect();
      await created.subscribe({ topics: [...byTopic.keys()], fromBeginning: true });
      await created.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: PARTITIONS_CONCURRENTLY,
        eachBatch,
      });
      let timer: NodeJS.Timeout | undefined;
      const joinedInTime = await Promise.race([
        joinedOnce.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), JOIN_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      if (!joinedInTime) {
        logger.warn(`the events consumer has not joined group "${groupId}" after ${JOIN_TIMEOUT_MS / 1000}s; it keeps trying`, {
          consumer_group: groupId,
          error: lastError,
        });
      }
    },
    async stop() {
      for (const timer of retryTimers) clearTimeout(timer);
      retryTimers.clear();
      joined = null;
      const current = consumer;
      consumer = null;
      state = "stopped";
      await current?.disconnect();
    },
  };
}

function contextOf(event: Event): RequestContext {
  return {
    tenantId: event.tenantId,
    requestId: event.requestId,
    traceparent: event.trace?.traceparent ?? null,
    tracestate: event.trace?.tracestate ?? null,
  };
}
