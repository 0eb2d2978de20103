import type { Event } from "../core/event.js";
import type { BlockedPartition } from "./events-bus.js";

/**
 * Partitions held at a failing message. A partition stays here from its first failure until that message
 * is handled; /ready is degraded meanwhile. Handlers that already succeeded for the blocked message are
 * remembered so a retry does not run their effects again in this process (a restart runs them all again:
 * delivery is at-least-once).
 */
export class BlockedPartitions {
  private readonly entries = new Map<string, BlockedPartition & { succeeded: Set<string> }>();

  fail(params: {
    topic: string;
    partition: number;
    offset: string;
    event: Event | null;
    handler: string | null;
    error: unknown;
    retryInMs: number;
    /** Handlers that have handled this message so far (kept across retries of the same offset). */
    succeeded: Set<string>;
  }): BlockedPartition {
    const key = keyOf(params.topic, params.partition);
    const now = new Date();
    const previous = this.entries.get(key);
    const sameMessage = previous?.offset === params.offset;
    const entry = {
      topic: params.topic,
      partition: params.partition,
      offset: params.offset,
      eventId: params.event?.id ?? null,
      eventType: params.event?.type ?? null,
      handler: params.handler,
      attempts: sameMessage ? previous!.attempts + 1 : 1,
      error: describe(params.error),
      since: sameMessage ? previous!.since : now.toISOString(),
      lastFailedAt: now.toISOString(),
      nextRetryAt: new Date(now.getTime() + params.retryInMs).toISOString(),
      succeeded: params.succeeded,
    };
    this.entries.set(key, entry);
    return publicView(entry);
  }

  /** Handlers that already handled the blocked message at `offset`, in this process. */
  succeeded(topic: string, partition: number, offset: string): Set<string> {
    const entry = this.entries.get(keyOf(topic, partition));
    return entry && entry.offset === offset ? entry.succeeded : new Set();
  }

  attempts(topic: string, partition: number, offset: string): number {
    const entry = this.entries.get(keyOf(topic, partition));
    return entry && entry.offset === offset ? entry.attempts : 0;
  }

  /** The message at the head of the partition went through: the partition flows again. */
  clear(topic: string, partition: number): boolean {
    return this.entries.delete(keyOf(topic, partition));
  }

  /** After a rebalance, a partition now owned by another member is its problem to report. */
  retain(assigned: ReadonlyMap<string, readonly number[]>): void {
    for (const [key, entry] of this.entries) {
      if (!assigned.get(entry.topic)?.includes(entry.partition)) this.entries.delete(key);
    }
  }

  list(): BlockedPartition[] {
    return [...this.entries.values()].map(publicView).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  }
}

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function publicView(entry: BlockedPartition & { succeeded?: Set<string> }): BlockedPartition {
  const { succeeded: _succeeded, ...rest } = entry;
  return { ...rest, error: { ...rest.error } };
}

function describe(error: unknown): { class: string; message: string } {
  if (error instanceof Error) return { class: error.name, message: error.message };
  return { class: typeof error, message: String(error) };
}
