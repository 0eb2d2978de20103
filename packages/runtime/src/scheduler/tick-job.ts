import { createHash } from "node:crypto";
import { Job } from "../core/job.js";
import type { Schedule } from "./schedule.js";

/** Namespace of scheduled-job ids (a fixed random UUID): ids never collide with other UUIDv5 users. */
const NAMESPACE = "6f1c2a4e-8d3b-4b7a-9e55-0c2f7d1a9b64";

/**
 * RFC 4122 version-5 UUID of `name` in our namespace. Deterministic: every replica derives the same job id
 * for the same schedule and tick, so a duplicate enqueue is a no-op in the queue.
 */
export function uuidV5(name: string): string {
  const hash = createHash("sha1")
    .update(Buffer.from(NAMESPACE.replace(/-/g, ""), "hex"))
    .update(name, "utf8")
    .digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function tickJobId(scheduleName: string, tick: number): string {
  return uuidV5(`${scheduleName}@${new Date(tick).toISOString()}`);
}

/**
 * The job a tick becomes: a normal job of the schedule's task. It belongs to no request or tenant, even when
 * the scheduler pass happens to run inside one.
 */
export function tickJob(schedule: Schedule, tick: number): Job {
  const scheduledFor = new Date(tick).toISOString();
  return new Job({
    id: tickJobId(schedule.name, tick),
    task: schedule.task,
    payload: { ...schedule.payload, scheduled_for: scheduledFor },
    availableAt: new Date(tick),
    tenantId: null,
    requestId: null,
    trace: null,
  });
}
