import type { Event } from "../core/event.js";

/**
 * `jfast.require("events")`: what the kafka plugin provides, as a service sees it. Types only, so that routes and
 * tasks can name it without loading kafkajs.
 */
export interface EventsBus {
  readonly consumerGroup: string;
  readonly brokers: readonly string[];
  /**
   * Sends events to `topic`, keyed by each event's `key` (the aggregate id): events of one aggregate land in
   * one partition and are consumed in the order published. Resolves once the broker has the events
   * (acks from all in-sync replicas); throws KAFKA_UNAVAILABLE / KAFKA_PUBLISH_FAILED otherwise.
   */
  publish(topic: string, events: Event | readonly Event[]): Promise<void>;
  /** Put before every topic this service publishes to and consumes, and before its group ("" for none). */
  readonly topicPrefix: string;
  /** The `/ready` check: broker reachability, lag per partition, and every partition blocked by a failing handler. */
  health(): Promise<EventsHealth>;
  /** Offsets, lag and blocked message per partition of the consumed topics (the admin API's `events.status`). */
  status(): Promise<EventsStatus>;
  /** The `on` handlers this process consumes with, by topic. */
  handlers(): { topic: string; name: string }[];
}

/** A partition whose next message keeps failing: nothing after it is handled or committed until it succeeds. */
export interface BlockedPartition {
  topic: string;
  partition: number;
  /** The offset of the failing message (the group's committed offset stays here). */
  offset: string;
  eventId: string | null;
  eventType: string | null;
  /** The handler that failed last. */
  handler: string | null;
  attempts: number;
  error: { class: string; message: string };
  since: string;
  lastFailedAt: string;
  nextRetryAt: string;
}

export interface PartitionLag {
  topic: string;
  partition: number;
  /** The group's committed offset (next message to handle); null before its first commit. */
  committed: string | null;
  /** The partition's end (high watermark). */
  end: string;
  lag: number;
}

export interface EventsHealth {
  status: "ok" | "degraded" | "unavailable";
  brokers: readonly string[];
  consumerGroup: string;
  topics: string[];
  consumer: "none" | "running" | "crashed" | "stopped";
  blocked: BlockedPartition[];
  lag: PartitionLag[];
  reason?: string;
  error?: string;
}

/**
 * The consumer group's position in every partition it consumes. Offsets are read with the admin client
 * (committed: OffsetFetch, end: ListOffsets) and reused for two seconds, so pollers cannot hammer the broker.
 */
export interface EventsStatus {
  /** The consumer group; null when this service declares no `on` handlers (it only publishes). */
  group: string | null;
  /** Why the offsets below are not current (the broker is unreachable, the consumer stopped); null when they are. */
  error: string | null;
  /** When the offsets were read from the broker; null before the first successful read. */
  offsetsReadAt: string | null;
  partitions: Array<{
    topic: string;
    partition: number;
    /** The next message the group will handle; null before its first commit (it starts at the beginning). */
    committedOffset: string | null;
    /** The high watermark: the offset the next published message will get. */
    endOffset: string;
    /** Messages not yet handled: endOffset − committedOffset (or − the earliest retained offset). */
    lag: number;
    /** The message every retry fails on; nothing behind it is handled or committed until it succeeds. */
    blocked: null | {
      offset: string;
      /** "<class>: <message>" of the last failure. */
      error: string;
      since: string;
      attempts: number;
      eventId: string | null;
      eventType: string | null;
      handler: string | null;
      nextRetryAt: string;
    };
  }>;
}
