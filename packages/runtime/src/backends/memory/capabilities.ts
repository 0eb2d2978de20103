import type { BackendCapabilities } from "../../core/queue-backend.js";

/** The memory queue: every view and action, in one process (docs/backends.md#capabilities). */
export const capabilities: BackendCapabilities = {
  transactionalEnqueue: false,
  handOff: false,
  pushesAhead: false,
  leaseThread: false,
  perTaskDepths: true,
  payloadIndex: false,
  requestIndex: true,
  cancellation: true,
  jobLookup: true,
  jobActions: true,
  listableStates: ["ready", "scheduled", "running", "completed", "dead", "cancelled", "expired"],
  keepsFinished: true,
  limits: true,
  keyedLimits: true,
  fairShare: true,
  orderPerKey: true,
  unique: true,
  debounce: true,
  priority: true,
  pauseStore: false,
  throughputStore: false,
  flows: true,
  workers: true,
};
