import type { Admin, LogEntry, Producer } from "kafkajs";
import { Event } from "../core/event.js";
import type { AppContext } from "../core/task.js";
import { JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import { createEventConsumer, type EventConsumer } from "./event-consumer.js";
import { loadKafkajs } from "./kafkajs.js";
import type { BlockedPartition, EventsBus, EventsHealth, EventsStatus, PartitionLag } from "./events-bus.js";
import { KafkaErrorCode, kafkaUnavailable, publishFailed, rootMessage, topicMissing, type BrokerSource } from "./kafka-errors.js";
import { validateTopic, type EventHandlerDefinition } from "./on.js";
import { encodeEvent } from "./wire.js";

const { Kafka, Partitioners, logLevel } = await loadKafkajs();

/** The kafka plugin, started: what create-jfast keeps and stops. Loaded by dynamic import only. */
export interface KafkaBus extends EventsBus {
  close(): Promise<void>;
}

export interface KafkaBusParams {
  service: string;
  brokers: BrokerSource;
  /** The group, already prefixed (kafka/config.ts puts `topicPrefix` before it). */
  consumerGroup: string;
  /** Put before every topic published to and consumed ("" for none). */
  topicPrefix?: string;
  handlers: readonly EventHandlerDefinition[];
  context: AppContext;
  logger: Logger;
}

/** How long start-up waits for the topics of `on` handlers to have partition leaders. */
const TOPIC_WAIT_MS = 15_000;
/**
 * How long one read of committed and end offsets is reused. /ready, /metrics and the admin API all ask for
 * lag; however often they are polled (a dashboard per operator, a scraper per replica), the broker sees at
 * most one pair of offset requests per topic in this interval.
 */
const LAG_CACHE_MS = 2000;

/**
 * Connects the producer (and, when this service declares `on` handlers, the consumer) or fails start-up with
 * KAFKA_UNAVAILABLE naming the addresses and where they came from: a service that cannot publish should not
 * report itself ready.
 */
export async function createKafkaBus(params: KafkaBusParams): Promise<KafkaBus> {
  const { logger, brokers: source } = params;
  const kafka = new Kafka({
    clientId: params.service,
    brokers: [...source.brokers],
    connectionTimeout: 3000,
    // Reconnects and leader moves are retried; an absent broker is reported within a few seconds.
    retry: { initialRetryTime: 100, retries: 5, maxRetryTime: 3000 },
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => forward(logger, entry),
  });

  const producer: Producer = kafka.producer({
    // One request in flight: a retried send cannot overtake the one after it, so a key's events stay in
    // order. Not kafkajs's idempotent mode: it wants unlimited retries, and a publish must fail within
    // seconds when the broker is gone. A retry may store an event twice; handlers are at-least-once anyway.
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: true,
  });
  // A second client for health checks, with few retries: /ready must answer quickly when the broker is gone.
  const admin: Admin = kafka.admin({ retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 } });

  let consumer: EventConsumer | null = null;
  const prefix = params.topicPrefix ?? "";
  // Handlers see the topic as Kafka names it (with the prefix), like health and the admin API do.
  const handlers = params.handlers.map((h) => (prefix ? { ...h, topic: prefix + h.topic } : h));
  const topics = [...new Set(handlers.map((h) => h.topic))].sort();
  try {
    await producer.connect();
    await admin.connect();
  } catch (cause) {
    await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    throw kafkaUnavailable(source, "connecting", cause);
  }

  if (topics.length > 0) {
    try {
      await ensureTopics(admin, topics);
      consumer = createEventConsumer({ kafka, groupId: params.consumerGroup, handlers, context: params.context, logger });
      await consumer.start();
    } catch (cause) {
      await Promise.allSettled([consumer?.stop(), producer.disconnect(), admin.disconnect()]);
      if (cause instanceof JfastError) throw cause;
      throw kafkaUnavailable(source, `starting the consumer of group "${params.consumerGroup}"`, cause);
    }
    logger.info(`consuming ${topics.join(", ")} as group "${params.consumerGroup}"`, { consumer_group: params.consumerGroup, topics });
  }

  // One read at a time, reused for LAG_CACHE_MS (a failure too: a broker that is gone is not asked again at once).
  let lagRead: { at: number; result: Promise<PartitionLag[]> } | null = null;
  let lastLag: { at: number; lag: PartitionLag[] } | null = null;
  function cachedLag(): Promise<PartitionLag[]> {
    const now = Date.now();
    if (lagRead && now - lagRead.at < LAG_CACHE_MS) return lagRead.result;
    const result = readLag();
    lagRead = { at: now, result };
    result.then((lag) => (lastLag = { at: Date.now(), lag }), () => undefined);
    return result;
  }

  async function readLag(): Promise<PartitionLag[]> {
    if (topics.length === 0) {
      await admin.describeCluster();
      return [];
    }
    const committed = await admin.fetchOffsets({ groupId: params.consumerGroup, topics });
    const lag: PartitionLag[] = [];
    for (const { topic, partitions } of committed) {
      const ends = await admin.fetchTopicOffsets(topic);
      for (const end of ends) {
        const mine = partitions.find((p) => p.partition === end.partition);
        const at = mine && mine.offset !== "-1" ? mine.offset : null;
        const from = at ?? end.low;
        lag.push({ topic, partition: end.partition, committed: at, end: end.high, lag: Math.max(0, Number(BigInt(end.high) - BigInt(from))) });
      }
    }
    return lag.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  }

  return {
    consumerGroup: params.consumerGroup,
    brokers: source.brokers,
    topicPrefix: prefix,
    handlers: () => handlers.map((h) => ({ topic: h.topic, name: h.name ?? h.topic })),

    async publish(topic, events) {
      const invalid = validateTopic(topic);
      if (invalid) throw new TypeError(`events.publish(topic, event): ${invalid}`);
      const list = (Array.isArray(events) ? events : [events]) as readonly Event[];
      const messages = list.map((event) => {
        const ready = asEvent(event, topic);
        if (ready.key === null) {
          throw new JfastError(`event "${ready.type}" published to "${topic}" has no key`, {
            code: KafkaErrorCode.eventKeyMissing,
            hint: `give it the aggregate id: new Event({ type: "${ready.type}", data, key: order.id }); Kafka orders events only within a partition, and the key picks the partition`,
            docs: "jfast docs kafka#keys",
          });
        }
        return encodeEvent(ready, params.service);
      });
      if (messages.length === 0) return;
      try {
        await producer.send({ topic: prefix + topic, acks: -1, messages });
      } catch (cause) {
        throw publishFailed(source, topic, cause);
      }
    },

    async health(): Promise<EventsHealth> {
      const blocked = consumer?.blocked.list() ?? [];
      const base = {
        brokers: source.brokers,
        consumerGroup: params.consumerGroup,
        topics,
        consumer: consumer ? (consumer.state() === "crashed" ? "crashed" : consumer.state() === "stopped" ? "stopped" : "running") : "none",
        blocked,
      } as const;
      let lag: PartitionLag[];
      try {
        lag = await cachedLag();
      } catch (error) {
        return { ...base, status: "unavailable", lag: [], error: `cannot reach Kafka at ${source.brokers.join(",")}: ${rootMessage(error)}` };
      }
      if (consumer?.state() === "crashed") {
        return { ...base, status: "unavailable", lag, error: `the consumer stopped: ${consumer.lastError()}` };
      }
      if (blocked.length > 0) {
        const first = blocked[0]!;
        return {
          ...base,
          status: "degraded",
          lag,
          reason: `${blocked.length} partition(s) blocked by a failing handler; ${first.topic}[${first.partition}] at offset ${first.offset} (${first.attempts} attempt(s)): ${first.error.message}`,
        };
      }
      return { ...base, status: "ok", lag };
    },

    async status(): Promise<EventsStatus> {
      const group = topics.length > 0 ? params.consumerGroup : null;
      let lag: PartitionLag[] = [];
      let error: string | null = null;
      try {
        lag = await cachedLag();
      } catch (cause) {
        error = `cannot reach Kafka at ${source.brokers.join(",")}: ${rootMessage(cause)}`;
        lag = lastLag?.lag ?? [];
      }
      if (!error && consumer?.state() === "crashed") error = `the consumer stopped: ${consumer.lastError()}`;
      return {
        group,
        error,
        offsetsReadAt: lastLag ? new Date(lastLag.at).toISOString() : null,
        partitions: partitionsOf(lag, consumer?.blocked.list() ?? []),
      };
    },

    async close() {
      await consumer?.stop();
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    },
  };
}

/**
 * Offsets per partition with the blocked message of each, if any. A blocked partition the offsets read does
 * not list yet (its topic was read before the failure) is still shown: its failing offset is a fact.
 */
function partitionsOf(lag: readonly PartitionLag[], blocked: readonly BlockedPartition[]): EventsStatus["partitions"] {
  const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;
  const byKey = new Map(blocked.map((b) => [key(b.topic, b.partition), b]));
  const rows: EventsStatus["partitions"] = lag.map((l) => ({
    topic: l.topic,
    partition: l.partition,
    committedOffset: l.committed,
    endOffset: l.end,
    lag: l.lag,
    blocked: blockedView(byKey.get(key(l.topic, l.partition))),
  }));
  for (const b of blocked) {
    if (lag.some((l) => l.topic === b.topic && l.partition === b.partition)) continue;
    const end = (BigInt(b.offset) + 1n).toString();
    rows.push({ topic: b.topic, partition: b.partition, committedOffset: null, endOffset: end, lag: 1, blocked: blockedView(b) });
  }
  return rows.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
}

function blockedView(entry: BlockedPartition | undefined): EventsStatus["partitions"][number]["blocked"] {
  if (!entry) return null;
  return {
    offset: entry.offset,
    error: `${entry.error.class}: ${entry.error.message}`,
    since: entry.since,
    attempts: entry.attempts,
    eventId: entry.eventId,
    eventType: entry.eventType,
    handler: entry.handler,
    nextRetryAt: entry.nextRetryAt,
  };
}

/** An Event from this copy of the runtime, or one built by another copy loaded side by side (same wire form). */
function asEvent(value: unknown, topic: string): Event {
  if (value instanceof Event) return value;
  const json = typeof (value as Event | null)?.toJSON === "function" ? (value as Event).toJSON() : null;
  if (json && typeof json.id === "string" && typeof json.type === "string") return Event.fromJSON(json);
  throw new TypeError(`events.publish("${topic}", event) takes an Event: new Event({ type: "order.paid", data, key: order.id })`);
}

/**
 * Topics of `on` handlers must exist, with partition leaders, before the group assigns partitions: a consumer
 * that joins while a topic is still missing is assigned nothing until its next metadata refresh (minutes).
 * A missing topic is created with the broker's defaults (num.partitions), as a broker with automatic topic
 * creation would on the first publish; a broker that refuses stops start-up naming the topic.
 */
async function ensureTopics(admin: Admin, topics: string[]): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t));
  if (missing.length > 0) {
    try {
      await admin.createTopics({ topics: missing.map((topic) => ({ topic })), waitForLeaders: true });
    } catch (cause) {
      // Another replica of this service may have created it a moment ago.
      if ((cause as { type?: string }).type !== "TOPIC_ALREADY_EXISTS") throw topicMissing(missing[0]!, cause);
    }
  }
  const deadline = Date.now() + TOPIC_WAIT_MS;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics });
      const ready = topics.every((name) => {
        const topic = found.find((t) => t.name === name);
        return topic && topic.partitions.length > 0 && topic.partitions.every((p) => p.leader >= 0);
      });
      if (ready) return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw last ?? new Error(`topics ${topics.join(", ")} have no partition leaders after ${TOPIC_WAIT_MS / 1000}s`);
}

/**
 * kafkajs logs through ours. Its protocol-level errors on a connection are retried by kafkajs itself
 * (a coordinator still loading, a leader moving), so they go to debug; crashes and warnings stay visible.
 */
function forward(logger: Logger, entry: LogEntry): void {
  const { message, timestamp: _timestamp, logger: _name, ...fields } = entry.log;
  const text = `kafkajs ${entry.namespace}: ${message}`;
  if (entry.level === logLevel.ERROR && entry.namespace !== "Connection") logger.error(text, pick(fields));
  else if (entry.level === logLevel.WARN) logger.warn(text, pick(fields));
  else logger.debug(text, pick(fields));
}

function pick(fields: Record<string, unknown>): Record<string, unknown> {
  const { broker, groupId, error, topic, partition, retryCount, retryTime } = fields;
  return Object.fromEntries(Object.entries({ broker, groupId, error, topic, partition, retryCount, retryTime }).filter(([, v]) => v !== undefined));
}
