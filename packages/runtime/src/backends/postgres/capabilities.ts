import type { BackendCapabilities } from "../../core/queue-backend.js";

/**
 * The PostgreSQL queue (docs/backends.md#capabilities): every view and action, through its indexes; jobs written
 * in the caller's transaction. PGlite, embedded, has no connection another thread could open: no lease thread.
 */
export const capabilities: BackendCapabilities = {
  transactionalEnqueue: true,
  handOff: true,
  pushesAhead: false,
  leaseThread: true,
  perTaskDepths: true,
  payloadIndex: true,
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

/** A backend given no connection URL (PGlite) cannot hand its leases to a heartbeat thread. */
export function postgresCapabilities(options: { connectionUrl?: string | undefined }): BackendCapabilities {
  return options.connectionUrl ? capabilities : { ...capabilities, leaseThread: false };
}
