import { Event, type EventJSON } from "../core/event.js";
import { JfastError } from "../errors/jfast-error.js";

/**
 * How an Event travels on Kafka. The value is the event's JSON wire form (the same one local subscribers
 * get), so it is self-contained: tenant, request id and trace ride inside it. The same facts are repeated as
 * headers for tools that route or trace by header without parsing the value (W3C `traceparent` is the
 * header name OpenTelemetry's Kafka instrumentation reads).
 */
export const HEADER = {
  eventId: "jfast-event-id",
  eventType: "jfast-event-type",
  service: "jfast-service",
  tenantId: "jfast-tenant-id",
  requestId: "jfast-request-id",
  traceparent: "traceparent",
  tracestate: "tracestate",
  contentType: "content-type",
} as const;

export interface WireMessage {
  key: string;
  value: string;
  headers: Record<string, string>;
  timestamp: string;
}

export function encodeEvent(event: Event, service: string): WireMessage {
  const json = event.toJSON();
  const headers: Record<string, string> = {
    [HEADER.eventId]: json.id,
    [HEADER.eventType]: json.type,
    [HEADER.service]: service,
    [HEADER.contentType]: "application/json",
  };
  if (json.tenantId) headers[HEADER.tenantId] = json.tenantId;
  if (json.requestId) headers[HEADER.requestId] = json.requestId;
  if (json.trace?.traceparent) headers[HEADER.traceparent] = json.trace.traceparent;
  if (json.trace?.tracestate) headers[HEADER.tracestate] = json.trace.tracestate;
  return {
    key: json.key!,
    value: JSON.stringify(json),
    headers,
    timestamp: String(event.occurredAt.getTime()),
  };
}

/** A message whose value is not a jfast event. It blocks its partition like a failing handler would. */
export class UnreadableEventError extends JfastError {
  constructor(message: string, cause?: unknown) {
    super(message, {
      code: "EVENT_UNREADABLE",
      hint: "publish with events.publish(topic, new Event({ type, data, key })); to skip a bad message, move the group's offset past it (jfast docs kafka#a-blocked-partition)",
      docs: "jfast docs kafka#a-blocked-partition",
      cause,
    });
    this.name = "UnreadableEventError";
  }
}

export function decodeEvent(value: Buffer | null): Event {
  if (value === null) throw new UnreadableEventError("the message has no value (a tombstone), not an event");
  let json: unknown;
  try {
    json = JSON.parse(value.toString("utf8"));
  } catch (cause) {
    throw new UnreadableEventError(`the message value is not JSON: ${(cause as Error).message}`, cause);
  }
  const candidate = json as Partial<EventJSON> | null;
  if (typeof candidate !== "object" || candidate === null || typeof candidate.id !== "string" || typeof candidate.type !== "string") {
    throw new UnreadableEventError("the message value is JSON but not an event: it needs at least a string id and type");
  }
  if (candidate.occurredAt !== undefined && (typeof candidate.occurredAt !== "string" || Number.isNaN(Date.parse(candidate.occurredAt)))) {
    // Else the handler would get an Invalid Date, and every log line and span of the event would fail on it.
    throw new UnreadableEventError(`the message is not a valid event: occurredAt ${JSON.stringify(candidate.occurredAt)} is not an ISO-8601 date`);
  }
  try {
    return Event.fromJSON({
      id: candidate.id,
      type: candidate.type,
      data: candidate.data ?? {},
      key: candidate.key ?? null,
      occurredAt: candidate.occurredAt ?? new Date().toISOString(),
      tenantId: candidate.tenantId ?? null,
      requestId: candidate.requestId ?? null,
      trace: candidate.trace ?? null,
    });
  } catch (cause) {
    throw new UnreadableEventError(`the message is not a valid event: ${(cause as Error).message}`, cause);
  }
}
