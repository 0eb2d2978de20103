import { Event, type EventJSON } from "../core/event.js";
import { Job, type JobJSON } from "../core/job.js";
import { validateTopic } from "../kafka/on.js";
import { OutboxUndeliverable } from "./outbox-errors.js";
import { OutboxKind, type ClaimedRow } from "./outbox-rows.js";

/** Where relayed rows go in this process: its queue backend and its event bus, when configured. */
export interface RelayDestinations {
  queue(): { name: string; enqueue(jobs: Job[]): Promise<unknown> } | null;
  bus(): { publish(topic: string, events: Event[]): Promise<void> } | null;
}

export type SendOutcome =
  | { kind: "delivered" }
  /** `permanent`: no retry can fix it with this configuration; the row dies now. */
  | { kind: "failed"; error: unknown; permanent: boolean }
  /** The relay stopped mid-send: the row goes back untouched. */
  | { kind: "abandoned" };

/** One call to a destination: the rows it carried and how it ended, for the relay's log. */
export interface SendReport {
  kind: OutboxKind;
  destination: string;
  rows: string[];
  error: unknown | null;
}

/**
 * Sends one claimed batch. Rows are grouped by destination and sent in claim order (seq), one call per
 * group: one enqueue of all the jobs for the queue, one produce of all the events for a topic. A group
 * succeeds or fails as a whole; a row that can never be sent (no bus, unknown queue, broken body) fails
 * alone and permanently, before anything is sent.
 */
export async function sendBatch(params: {
  rows: readonly ClaimedRow[];
  destinations: RelayDestinations;
  /** Bounds every send (timeout, relay stopping). */
  guard: <T>(destination: string, send: () => Promise<T>) => Promise<T>;
  isAbandon: (error: unknown) => boolean;
}): Promise<{ outcomes: Map<string, SendOutcome>; sends: SendReport[] }> {
  const outcomes = new Map<string, SendOutcome>();
  const sends: SendReport[] = [];
  const groups = new Map<string, ClaimedRow[]>();
  for (const row of [...params.rows].sort((a, b) => a.seq - b.seq)) {
    const key = `${row.kind}\u0000${row.destination}`;
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  for (const rows of groups.values()) {
    const { kind, destination } = rows[0]!;
    const ready: { row: ClaimedRow; item: Job | Event }[] = [];
    for (const row of rows) {
      try {
        ready.push({ row, item: decode(row, params.destinations) });
      } catch (error) {
        outcomes.set(row.id, { kind: "failed", error, permanent: true });
      }
    }
    if (ready.length === 0) continue;
    const ids = ready.map((r) => r.row.id);
    try {
      if (kind === OutboxKind.job) {
        const queue = params.destinations.queue()!;
        await params.guard(`queue "${destination}"`, () => queue.enqueue(ready.map((r) => r.item as Job)));
      } else {
        const bus = params.destinations.bus()!;
        await params.guard(`Kafka topic "${destination}"`, () => bus.publish(destination, ready.map((r) => r.item as Event)));
      }
      for (const id of ids) outcomes.set(id, { kind: "delivered" });
      sends.push({ kind, destination, rows: ids, error: null });
    } catch (error) {
      const outcome: SendOutcome = params.isAbandon(error) ? { kind: "abandoned" } : { kind: "failed", error, permanent: false };
      for (const id of ids) outcomes.set(id, outcome);
      if (outcome.kind === "failed") sends.push({ kind, destination, rows: ids, error });
    }
  }
  return { outcomes, sends };
}

/** The row's body as the destination takes it; throws OutboxUndeliverable when no retry could send it. */
function decode(row: ClaimedRow, destinations: RelayDestinations): Job | Event {
  if (row.kind === OutboxKind.job) {
    const queue = destinations.queue();
    if (!queue) {
      throw new OutboxUndeliverable(
        `job ${row.id} cannot be delivered: this service has no queue (the "queue" plugin is off in this process)`,
        `enable "queue" in [plugins] of every process that runs the outbox, or discard the row (jfast outbox discard ${row.id})`,
      );
    }
    if (row.destination !== queue.name) {
      throw new OutboxUndeliverable(
        `job ${row.id} is for queue "${row.destination}", but this service's queue is "${queue.name}"`,
        `a row is delivered to the queue named when it was written: set [plugin.queue] name = "${row.destination}" again, or discard the row`,
      );
    }
    const json = parse(row) as JobJSON;
    if (typeof json?.id !== "string" || typeof json.task !== "string") throw unreadable(row, "a job");
    try {
      return Job.fromJSON(json);
    } catch (cause) {
      throw unreadable(row, `a job (${(cause as Error).message})`);
    }
  }
  if (row.kind !== OutboxKind.event) throw unreadable(row, `a job or an event (kind "${String(row.kind)}")`);
  if (!destinations.bus()) {
    throw new OutboxUndeliverable(
      `event ${row.id} cannot be delivered: this service has no event bus (the "events" plugin is off in this process)`,
      `enable "events" in [plugins] with [plugin.events] bootstrap_servers in every process that runs the outbox, or discard the row (jfast outbox discard ${row.id})`,
    );
  }
  const invalidTopic = validateTopic(row.destination);
  if (invalidTopic) throw new OutboxUndeliverable(`event ${row.id}: ${invalidTopic}`, "discard the row and publish to a valid topic");
  const json = parse(row) as EventJSON;
  if (typeof json?.id !== "string" || typeof json.type !== "string") throw unreadable(row, "an event");
  let event: Event;
  try {
    event = Event.fromJSON(json);
  } catch (cause) {
    throw unreadable(row, `an event (${(cause as Error).message})`);
  }
  if (event.key === null) {
    throw new OutboxUndeliverable(
      `event ${row.id} ("${event.type}") has no key, and Kafka partitions by key`,
      `publish events with their aggregate id: new Event({ type: "${event.type}", data, key })`,
    );
  }
  return event;
}

function parse(row: ClaimedRow): unknown {
  try {
    return JSON.parse(row.body);
  } catch {
    return null;
  }
}

function unreadable(row: ClaimedRow, what: string): OutboxUndeliverable {
  return new OutboxUndeliverable(`outbox row ${row.id} is not ${what}`, "the row was not written by jfast's outbox; discard it (jfast outbox discard <id>)");
}
