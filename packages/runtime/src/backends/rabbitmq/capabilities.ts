import type { BackendCapabilities } from "../../core/queue-backend.js";

/**
 * The RabbitMQ queue on its own (docs/backends.md#capabilities): a broker cannot read, list or change a waiting
 * message, count per task, or hold a key; it keeps dead letters only. The service's database adds cancellations
 * (recorded), unique keys, task limits, flows and the worker registry: `rabbitmqCapabilities` of the options says what a backend has.
 */
export const capabilities: BackendCapabilities = {
  transactionalEnqueue: false,
  handOff: false,
  pushesAhead: true,
  leaseThread: false,
  perTaskDepths: false,
  payloadIndex: false,
  requestIndex: false,
  cancellation: false,
  jobLookup: false,
  jobActions: false,
  listableStates: ["dead"],
  keepsFinished: false,
  limits: false,
  keyedLimits: false,
  fairShare: false,
  orderPerKey: false,
  unique: false,
  debounce: false,
  priority: true,
  pauseStore: false,
  throughputStore: false,
  flows: false,
  workers: false,
};

/** What a backend with these stores beside the broker (the service's database) and this queue type can do. */
export function rabbitmqCapabilities(has: { cancellations: boolean; uniqueKeys: boolean; limits: boolean; flows?: boolean; workers?: boolean; quorum: boolean }): BackendCapabilities {
  return {
    ...capabilities,
    cancellation: has.cancellations ? "recorded" : false,
    unique: has.uniqueKeys,
    limits: has.limits,
    keyedLimits: false,
    fairShare: false,
    orderPerKey: false,
    flows: has.flows ?? false,
    workers: has.workers ?? false,
    // RabbitMQ 3.10's quorum queues keep no message priority.
    priority: !has.quorum,
  };
}
