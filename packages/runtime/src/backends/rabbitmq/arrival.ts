import type { JobJSON } from "../../core/job.js";
import { decodeJob, numberHeader } from "./message.js";
import { Header } from "./names.js";

/**
 * What a message arriving on the work queue means, decided from the message alone (pure, so tested beside
 * this file):
 *  - ready:      a job to hand to a worker.
 *  - lost:       the broker redelivers it: the consumer it was given to went away without settling it (its
 *                process died, its connection dropped, or its lease expired and the backend gave it back).
 *                That attempt was spent; the body does not know it, so the receiver records it.
 *  - early:      a delay longer than the cascade, back before its due time: it rides again.
 *  - unreadable: not a jfast job; dead-lettered untouched with the reason.
 *
 * The JSON's `attempts` counts attempts already spent when the message was published; the delivery that
 * hands it to a worker is the next attempt.
 */
export type Arrival =
  | { kind: "ready"; json: JobJSON }
  | { kind: "lost"; json: JobJSON }
  | { kind: "early"; json: JobJSON; dueAt: number }
  | { kind: "unreadable"; reason: string };

export interface ArrivingMessage {
  content: Buffer;
  fields: { redelivered: boolean };
  properties: { headers?: Record<string, unknown> | undefined; messageId?: string | undefined; type?: string | undefined };
}

export function classifyArrival(message: ArrivingMessage, now: number): Arrival {
  const decoded = decodeJob(message.content, message.properties);
  if (!decoded.ok) return { kind: "unreadable", reason: decoded.reason };
  // Early comes first: a message that never ran spent no attempt, whoever held it before.
  const dueAt = numberHeader(message.properties.headers, Header.dueAt);
  if (dueAt !== null && dueAt > now) return { kind: "early", json: decoded.json, dueAt };
  if (message.fields.redelivered) return { kind: "lost", json: decoded.json };
  return { kind: "ready", json: decoded.json };
}
