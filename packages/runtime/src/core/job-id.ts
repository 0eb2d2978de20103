import { randomUUID } from "node:crypto";

/**
 * A new job's id: a version-7 UUID (RFC 9562), whose first 48 bits are the Unix time in milliseconds and the
 * rest random. Ids made close in time sort close together, so the PostgreSQL queue's primary key receives new
 * jobs at its right edge instead of on random pages all over the index: a batch of inserts, claims or
 * completions touches a few index pages instead of one per job. Ids stay opaque: nothing reads the time back.
 */
export function newJobId(now: number = Date.now()): string {
  const time = Math.max(0, Math.floor(now)).toString(16).padStart(12, "0").slice(-12);
  // randomUUID() is "xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx": keep its random tail and variant, set version 7.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}

const V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * The Unix time in milliseconds a version-7 UUID carries in its first 48 bits, or null for any other id. For an
 * id jfast generated it is the job's `createdAt`, to the millisecond, so a message may leave that field out.
 */
export function jobIdTime(id: string): number | null {
  const match = V7.exec(id);
  return match ? parseInt(match[1]! + match[2]!, 16) : null;
}
