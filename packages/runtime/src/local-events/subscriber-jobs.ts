import { createHash } from "node:crypto";
import type { Event } from "../core/event.js";
import { Job } from "../core/job.js";
import type { SubscriberDefinition } from "./subscribe.js";

/**
 * The id of the job that delivers `eventId` to `subscriber`: a name-based UUID (version 5 layout over
 * SHA-1), so every process derives the same id and a second publish of the same event is an enqueue of
 * ids that already exist, which every backend treats as a no-op.
 */
export function subscriberJobId(eventId: string, subscriber: string): string {
  const hash = createHash("sha1").update("jfast.event\u0000").update(eventId).update("\u0000").update(subscriber).digest();
  const bytes = Buffer.from(hash.subarray(0, 16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * One job per subscriber. The job carries the event's tenant, request id and trace (not whatever context
 * the publisher happens to run in), so the worker restores what the event recorded.
 */
export function subscriberJobs(event: Event, subscribers: readonly SubscriberDefinition[]): Job[] {
  const payload = event.toJSON();
  return subscribers.map(
    (subscriber) =>
      new Job({
        id: subscriberJobId(event.id, subscriber.name),
        task: subscriber.name,
        payload,
        tenantId: event.tenantId,
        requestId: event.requestId,
        trace: event.trace,
      }),
  );
}
