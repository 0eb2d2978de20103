import { Event, type EventJSON } from "../core/event.js";
import { flowPlanFromJSON, type FlowPlan, type FlowPlanJSON } from "../core/flow.js";
import { Job, type JobJSON } from "../core/job.js";
import { validateTopic } from "../kafka/on.js";
import { OutboxUndeliverable } from "./outbox-errors.js";
import { OutboxKind, type ClaimedRow } from "./outbox-rows.js";

/** Where relayed rows go in this process: its queue backend and its event bus, when configured. */
export interface RelayDestinations {
  queue(): { name: string; enqueue(jobs: Job[]): Promise<unknown>; enqueueFlow(flow: FlowPlan): Promise<unknown> } | null;
  bus(): { publish(topic: string, events: Event[]): Promise<void> } | null;
}

/** One call to a destination carrying a group of rows (all the jobs for the queue, all the events for a topic). */
export interface PreparedSend {
  kind: OutboxKind;
  destination: string;
  rows: ClaimedRow[];
  send(): Promise<unknown>;
}

/**
 * Turns a claimed batch into sends. Rows are grouped by destination and kept in claim order (seq), one call
 * per group: one enqueue of all the jobs for the queue, one produce of all the events for a topic. A group
 * succeeds or fails as a whole. A row that can never be sent with this configuration (no bus, a queue this
 * process does not have, a broken body) is left out and returned in `undeliverable`, to die at once.
 */
export function prepareBatch(rows: readonly ClaimedRow[], destinations: RelayDestinations): {
  sends: PreparedSend[];
  undeliverable: Map<ClaimedRow, unknown>;
} {
  const undeliverable = new Map<ClaimedRow, unknown>();
  const groups = new Map<string, { row: ClaimedRow; item: Job | Event | FlowPlan }[]>();
  for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
    let item: Job | Event | FlowPlan;
    try {
      item = row.kind === OutboxKind.flow ? decodeFlow(row, destinations) : decode(row, destinations);
    } catch (error) {
      undeliverable.set(row, error);
      continue;
    }
    // A flow is written on its own (all its steps or none), so each is a group of one.
    const key = row.kind === OutboxKind.flow ? `${row.kind}\u0000${row.id}` : `${row.kind}\u0000${row.destination}`;
    const group = groups.get(key);
    if (group) group.push({ row, item });
    else groups.set(key, [{ row, item }]);
  }
  const sends: PreparedSend[] = [];
  for (const group of groups.values()) {
    const { kind, destination } = group[0]!.row;
    const items = group.map((g) => g.item);
    sends.push({
      kind,
      destination,
      rows: group.map((g) => g.row),
      send:
        kind === OutboxKind.job
          ? () => destinations.queue()!.enqueue(items as Job[])
          : kind === OutboxKind.flow
            ? () => destinations.queue()!.enqueueFlow(items[0] as FlowPlan)
            : () => destinations.bus()!.publish(destination, items as Event[]),
    });
  }
  return { sends, undeliverable };
}

/** A job or flow row can reach this process's queue; else OutboxUndeliverable saying what to change. */
function checkQueue(row: ClaimedRow, destinations: RelayDestinations, what: "job" | "flow"): void {
  const queue = destinations.queue();
  if (!queue) {
    throw new OutboxUndeliverable(
      `${what} ${row.id} cannot be delivered: this service has no queue (the "queue" plugin is off in this process)`,
      `enable "queue" in [plugins] of every process that runs the outbox, or discard the row (jfast outbox discard ${row.id})`,
    );
  }
  if (row.destination !== queue.name) {
    throw new OutboxUndeliverable(
      `${what} ${row.id} is for queue "${row.destination}", but this service's queue is "${queue.name}"`,
      `a row is delivered to the queue named when it was written: set [plugin.queue] name = "${row.destination}" again, or discard the row`,
    );
  }
}

/** A flow row's plan (outbox.flow with a queue outside the caller's database); undeliverable as a job row is. */
function decodeFlow(row: ClaimedRow, destinations: RelayDestinations): FlowPlan {
  checkQueue(row, destinations, "flow");
  const json = parse(row) as FlowPlanJSON;
  if (typeof json?.id !== "string" || !Array.isArray(json.steps) || json.steps.length === 0) throw unreadable(row, "a flow");
  try {
    return flowPlanFromJSON(json);
  } catch (cause) {
    throw unreadable(row, `a flow (${(cause as Error).message})`);
  }
}

/** The row's body as the destination takes it; throws OutboxUndeliverable when no retry could send it. */
function decode(row: ClaimedRow, destinations: RelayDestinations): Job | Event {
  if (row.kind === OutboxKind.job) {
    checkQueue(row, destinations, "job");
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
      `event ${row.id} cannot be delivered: this service has no event bus (the "kafka" plugin is off in this process)`,
      `enable "kafka" in [plugins] with [plugin.kafka] bootstrap_servers in every process that runs the outbox, or discard the row (jfast outbox discard ${row.id})`,
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
