import type { BackendCapabilities } from "../../core/queue-backend.js";

/**
 * The Redis queue (docs/backends.md#capabilities): no payload index; cancelled jobs are kept but not listed (a
 * cancelled job's hash expires on its own, docs/redis.md); paused tasks, throughput counts and flows live in its keys.
 */
export const capabilities: BackendCapabilities = {
  transactionalEnqueue: false,
  handOff: true,
  pushesAhead: false,
  leaseThread: true,
  perTaskDepths: true,
  payloadIndex: false,
  requestIndex: false,
  cancellation: true,
  jobLookup: true,
  jobActions: true,
  listableStates: ["ready", "scheduled", "running", "completed", "dead"],
  keepsFinished: true,
  limits: true,
  keyedLimits: true,
  fairShare: true,
  orderPerKey: true,
  unique: true,
  debounce: true,
  priority: true,
  pauseStore: true,
  throughputStore: true,
  flows: true,
  workers: true,
};
