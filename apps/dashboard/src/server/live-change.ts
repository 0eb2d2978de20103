import type { EventsView, OutboxView, OverviewView } from "@jfast/runtime/admin";

/** What one service looks like now, as pushed to browsers (only when it changed). */
export interface LiveMessage {
  service: string;
  at: string;
  overview: OverviewView | null;
  outbox: OutboxView | null;
  /** Kafka consumer lag and blocked partitions, where the events plugin runs. */
  events: EventsView | null;
  /** Set when the service did not answer; the browser then refetches and shows it as down. */
  error: string | null;
}

/**
 * What counts as a change: depths, health, plugins and tasks, outbox backlog, Kafka offsets and blocked
 * partitions, reachability (not timestamps or latencies).
 */
export function fingerprintOf(message: LiveMessage): string {
  const { overview, outbox, events, error } = message;
  return JSON.stringify([
    error,
    overview?.queue,
    overview?.readiness.status,
    overview ? Object.entries(overview.readiness.checks).map(([name, check]) => [name, check.status]) : null,
    overview?.plugins,
    overview?.tasks.map((t) => t.name),
    outbox ? [outbox.status, outbox.pending, outbox.failing] : null,
    events ? [events.reported, events.error, events.partitions.map((p) => [p.topic, p.partition, p.committedOffset, p.endOffset, p.blocked?.offset, p.blocked?.attempts])] : null,
  ]);
}
