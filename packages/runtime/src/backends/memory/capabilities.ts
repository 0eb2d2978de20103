import type { BackendCapabilities } from "../../core/queue-backend.js";

/** The memory queue: every view and action, in one process (docs/backends.md#capabilities). */
export const capabilities: BackendCapabilities = {
  transactionalEnqueue: false,
  handOff: false,
  pushesAhead: false,
  leaseThread: false,
  perTaskDepths: true,
  payloadIndex: false,
  cancellation: true,
  jobLookup: true,
  jobActions: true,
  listableStates: ["ready", "scheduled", "running", "completed", "dead", "cancelled"],
  keepsFinished: true,
  limits: true,
  unique: true,
  priority: true,
  pauseStore: false,
  throughputStore: false,
  flows: true,
};
