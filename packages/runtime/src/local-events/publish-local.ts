import { Event } from "../core/event.js";
import type { Job } from "../core/job.js";
import type { SqlExecutor } from "../core/sql-port.js";
import type { TaskDefinition } from "../core/task.js";
import { UndeliverableEvent } from "../errors/undeliverable-event.js";
import { subscriberJobs } from "./subscriber-jobs.js";
import { subscribersOf } from "./subscribe.js";

/**
 * The kafka plugin as the outbox sees it. It must make the event reach `topic` if and only if the
 * caller's transaction commits, so it writes inside that transaction (a jfast_outbox row the relay sends),
 * never straight to the broker.
 */
export interface OutboxEventBus {
  publishWithin(params: { executor: SqlExecutor; session: unknown; topic: string; event: Event }): Promise<void>;
}

export interface PublishResult {
  /** Ids of the subscriber jobs this call wrote (empty on a repeat publish: they already exist). */
  inserted: string[];
  /** The subscriber task names the event was addressed to. */
  subscribers: string[];
  /** True when the event was also handed to the bus for other services. */
  bus: boolean;
}

/**
 * `outbox.publish(session, topic, event)`: matches subscribers by the event's type (never its topic, a Kafka
 * partitioning detail) and writes one job per subscriber through `enqueue`, in the caller's transaction.
 * Nothing is written when nobody would receive the event.
 */
export async function publishLocal(params: {
  service: string;
  definitions: readonly TaskDefinition[];
  bus: OutboxEventBus | null;
  enqueue: (session: unknown, jobs: Job[]) => Promise<{ inserted: string[] }>;
  executor: (session: unknown) => SqlExecutor;
  session: unknown;
  topic: string;
  event: unknown;
}): Promise<PublishResult> {
  const { topic } = params;
  if (typeof topic !== "string" || topic.length === 0) {
    throw new TypeError(`outbox.publish(session, topic, event) needs a topic such as "receipts" (got ${JSON.stringify(topic)})`);
  }
  const event = asEvent(params.event, topic);
  const subscribers = subscribersOf(params.definitions, event.type);
  if (subscribers.length === 0 && !params.bus) {
    throw new UndeliverableEvent({ eventType: event.type, topic, service: params.service });
  }
  let inserted: string[] = [];
  if (subscribers.length > 0) {
    inserted = (await params.enqueue(params.session, subscriberJobs(event, subscribers))).inserted;
  }
  if (params.bus) {
    await params.bus.publishWithin({ executor: params.executor(params.session), session: params.session, topic, event });
  }
  return { inserted, subscribers: subscribers.map((s) => s.name), bus: params.bus !== null };
}

/** An Event from this copy of the runtime, or one built by another copy loaded side by side (same wire form). */
function asEvent(value: unknown, topic: string): Event {
  if (value instanceof Event) return value;
  const json = typeof (value as Event | null)?.toJSON === "function" ? (value as Event).toJSON() : null;
  if (json && typeof json.id === "string" && typeof json.type === "string") return Event.fromJSON(json);
  throw new TypeError(`outbox.publish(session, "${topic}", event) takes an Event: new Event({ type: "receipt.registered", data })`);
}
