import type { EventsView, OutboxView, OverviewView } from "@jfast/runtime/admin";

/**
 * The parts of a service's state a push can say changed; each view is re-read only when a part it shows did.
 * `depths` moves with every job that runs, so nothing that is costly to read may depend on it.
 */
export const LIVE_PARTS = ["health", "setup", "depths", "deadLetters", "outbox", "events"] as const;
export type LivePart = (typeof LIVE_PARTS)[number];

/** What one service looks like now, as pushed to browsers (only when it changed). */
export interface LiveMessage {
  service: string;
  at: string;
  overview: OverviewView | null;
  outbox: OutboxView | null;
  /** Kafka consumer lag and blocked partitions, where the kafka plugin runs. */
  events: EventsView | null;
  /** Set when the service did not answer; the browser then refetches and shows it as down. */
  error: string | null;
  /** Which parts changed since the previous push (every part in the first one). */
  changed: LivePart[];
}

export type PartPrints = Record<LivePart, string>;

/**
 * A fingerprint per part (not timestamps or latencies): health and reachability; plugins and tasks; the
 * depths other than dead; dead letters (their count and the newest one, so a retry and a new death in the same
 * interval still count); outbox backlog; Kafka offsets and blocked partitions.
 */
export function partPrints(message: Pick<LiveMessage, "overview" | "outbox" | "events" | "error">): PartPrints {
  const { overview, outbox, events, error } = message;
  const queue = overview?.queue.enabled ? overview.queue : null;
  const withoutDead = (d: { ready: number; scheduled: number; running: number } | null | undefined) => (d ? [d.ready, d.scheduled, d.running] : null);
  return {
    health: JSON.stringify([error, overview?.readiness.status, overview ? Object.entries(overview.readiness.checks).map(([name, check]) => [name, check.status]) : null, queue?.error]),
    setup: JSON.stringify([overview?.plugins, overview?.tasks.map((t) => t.name)]),
    depths: JSON.stringify([withoutDead(queue?.depths), queue?.queues?.map((q) => [q.name, withoutDead(q.depths)])]),
    deadLetters: JSON.stringify([queue?.depths?.dead, queue?.queues?.map((q) => [q.name, q.depths.dead]), queue?.newestDead?.id, queue?.newestDead?.diedAt]),
    outbox: JSON.stringify(outbox ? [outbox.status, outbox.pending, outbox.failing] : null),
    events: JSON.stringify(events ? [events.reported, events.error, events.partitions.map((p) => [p.topic, p.partition, p.committedOffset, p.endOffset, p.blocked?.offset, p.blocked?.attempts])] : null),
  };
}

/** The parts whose fingerprint differs; every part when there is nothing to compare with. */
export function changedParts(before: PartPrints | undefined, after: PartPrints): LivePart[] {
  return LIVE_PARTS.filter((part) => before?.[part] !== after[part]);
}

/**
 * Which parts make a view stale, by the first procedure path that matches (`deadLetters.replays` before
 * `deadLetters`). A procedure not listed is re-read on any change. The overview, outbox and Kafka status come
 * with the push; contracts and the bulk preview must not change under the user's eyes. A third number is the
 * least time between two re-reads of a costly view: a service that loses a job every couple of seconds would
 * otherwise have its 100 newest dead letters (~57 KB) read by every tab at every push.
 */
const STALE_ON: [prefix: string, parts: readonly LivePart[], minIntervalMs?: number][] = [
  ["overview.get", []],
  ["overview.whoami", []],
  ["overview.tasks", ["setup"]],
  ["overview.throughput", ["depths", "deadLetters"]],
  // The history moves as jobs end (depths); a few queries of rows per service, read at most every 5 s.
  ["stats", ["depths", "deadLetters"], 5_000],
  ["outbox.status", []],
  ["events.status", []],
  ["contracts", []],
  ["deadLetters.preview", []],
  ["jobs.bulkPreview", []],
  ["deadLetters.replays", ["deadLetters", "depths"]],
  ["deadLetters", ["deadLetters"], 10_000],
  // A job's page follows it through every state; lists by state move with the depths.
  ["jobs", ["depths", "deadLetters"]],
  // A flow moves on as its steps' jobs do: with the depths, and with the dead letters when a step dies.
  ["flows", ["depths", "deadLetters"]],
  ["queues", ["depths", "deadLetters", "health"]],
  ["schedules", ["depths", "setup"]],
  ["outbox", ["outbox"]],
  ["events", ["events"]],
  // Operators' repairs: each one also moves the dead letters or the depths.
  ["audit", ["deadLetters", "depths"], 10_000],
];

function entryOf(procedure: string) {
  return STALE_ON.find(([prefix]) => procedure === prefix || procedure.startsWith(`${prefix}.`));
}

/** True when a query of `procedure` ("deadLetters.list") shows one of the parts that changed. */
export function isStale(procedure: string, changed: readonly LivePart[], error: boolean): boolean {
  if (error) return true;
  const entry = entryOf(procedure);
  if (!entry) return changed.length > 0;
  return entry[1].some((part) => changed.includes(part));
}

/**
 * How long a stale view read at `readAt` waits before it is re-read: 0 for most (at once), else until its least
 * interval since the last read has passed. The first change after a quiet spell shows at once.
 */
export function rereadDelay(procedure: string, readAt: number, now: number): number {
  const least = entryOf(procedure)?.[2] ?? 0;
  return Math.max(0, readAt + least - now);
}
