import type { LeaseExtenderSpec } from "../../core/lease-extender.js";

/**
 * From a worker (main thread) to the heartbeat thread. `key` names one backend's connection, `worker` one Worker
 * object (the workers of one process, one per named queue, share a worker id). Times are `now()` below: the same
 * clock in every thread of the process (performance.now() alone starts at each thread's birth).
 */
export type ToHeartbeatThread =
  | { type: "open"; key: string; spec: LeaseExtenderSpec }
  /** Jobs just claimed: kept alive from now on, even if the main thread blocks before its next beat. */
  | { type: "hold"; key: string; worker: number; workerId: string; leaseMs: number; ids: string[]; at: number }
  /**
   * The main thread's own heartbeat went through for `ids`, all the jobs the worker held at `heldAt` (when the beat
   * began). Jobs held since (a claim while the beat was in flight) are not in it and stay held.
   */
  | { type: "beat"; key: string; worker: number; workerId: string; leaseMs: number; ids: string[]; heldAt: number; at: number }
  /**
   * All the jobs the worker held at `heldAt`, sent between beats once many jobs were held since the last list: the
   * thread forgets the finished ones. Not a beat: it says nothing of the leases.
   */
  | { type: "held"; key: string; worker: number; workerId: string; leaseMs: number; ids: string[]; heldAt: number }
  | { type: "forget"; key: string; worker: number }
  /** The last worker detached: every connection is closed (an "open" comes before the next worker's jobs). */
  | { type: "close" };

/** From the heartbeat thread to the workers. */
export type FromHeartbeatThread =
  | { type: "kept"; key: string; worker: number; workerId: string; ids: string[]; cancelled: string[]; silentMs: number }
  | { type: "failed"; key: string; worker: number | null; message: string };

export function now(): number {
  return performance.timeOrigin + performance.now();
}
