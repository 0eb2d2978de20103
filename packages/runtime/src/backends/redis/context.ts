import type { Job } from "../../core/job.js";
import type { LimitedTasks } from "../../core/backend/limited-tasks.js";
import type { SlotOffers } from "../../core/backend/slot-offers.js";
import type { RedisClient } from "./connection.js";
import type { QueueKeys } from "./keys.js";
import type { RedisBackendOptions } from "./redis-backend.js";
import type { ReplicaWait, ScriptName } from "./scripts.js";

/** What every operation of the Redis queue (enqueue.ts, claim.ts, outcomes.ts, admin.ts, maintenance.ts) works on. */
export interface RedisQueue {
  readonly options: RedisBackendOptions;
  readonly keys: QueueKeys;
  readonly redis: RedisClient;
  readonly replicaWait: ReplicaWait | undefined;
  readonly workerTtlMs: number;
  readonly completedRetentionMs: number;
  readonly cancelledRetentionMs: number;
  /** The tail of a "worker lost" error as JSON, completed by the scripts with the attempt and the time. */
  readonly lostTail: string;
  /** Per worker id: jobs handed to it and not settled yet. Anything else in its processing list is re-delivered. */
  readonly held: Map<string, Set<string>>;
  /** Idle workers of this process offering their free slots (offerSlots). */
  readonly offers: SlotOffers;
  /** The queue's limited tasks (setLimits); none: claim.lua reads no limit. */
  readonly limited: LimitedTasks;
  /** Claims so far while the queue has a fair task that counts nothing: every other one reads the ready lists first. */
  fairClaims: number;
  /** Runs one script of scripts/ with the keys and arguments every script starts with. */
  script(name: ScriptName, operation: string, args: ReadonlyArray<string | number>, wait?: ReplicaWait): Promise<unknown>;
  /** Runs `fn`, translating a Redis error into a JfastError naming `operation`; refuses once the backend is closed. */
  guard<T>(operation: string, fn: () => Promise<T>): Promise<T>;
  /** Tells idle workers everywhere that a job was scheduled for `dueMs`. */
  announce(dueMs: number): Promise<void>;
}

/** A job as enqueue.lua, enqueue-unique.lua and enqueue-hand-off.lua read it: id, json, attempts, errors, due, max attempts. */
export function packJob(job: Job, into: Array<string | number>): void {
  const json = job.toJSON();
  into.push(json.id, JSON.stringify(json), json.attempts, JSON.stringify(json.errors), job.availableAt.getTime(), json.maxAttempts ?? 0);
}

/** Announces the earliest due time of a batch that inserted something and is not due yet. */
export async function announceBatch(q: RedisQueue, jobs: readonly Job[], inserted: readonly string[]): Promise<void> {
  const earliest = Math.min(...jobs.map((j) => j.availableAt.getTime()));
  if (inserted.length > 0 && earliest > Date.now()) await q.announce(earliest);
}
