import { NotSupportedError } from "../../errors/jfast-error.js";
import type { ListState } from "./admin.js";

/**
 * What a backend can do, as data (docs/backends.md#capabilities): each backend exports one object, read by the
 * worker, the outbox, the scheduler, the admin API and the conformance suite. A capability that is off has one behaviour: the member
 * it names throws NotSupportedError with the reason and the docs page (`notSupported`), and callers check the flag
 * before calling. Several depend on the backend's options (RabbitMQ with the service's database), so the object is
 * also on every backend instance, `backend.capabilities`.
 */
export interface BackendCapabilities {
  /** `enqueueWithin`: jobs written in the caller's SQL transaction (the PostgreSQL queue; docs/outbox.md). */
  readonly transactionalEnqueue: boolean;
  /** `offerSlots`: due jobs enqueued in this process handed to its idle workers in memory. */
  readonly handOff: boolean;
  /** The broker pushes messages ahead of claims (RabbitMQ's prefetch); the worker then keeps no buffer of its own. */
  readonly pushesAhead: boolean;
  /** `leaseExtender`: leases extended by a heartbeat thread on a connection of its own (docs/worker.md#leases-and-heartbeats). */
  readonly leaseThread: boolean;
  /** `depthsByTask` answers; off: NotSupportedError. */
  readonly perTaskDepths: boolean;
  /** `searchDead` answers through an index of dead letters' payloads; off: NotSupportedError. */
  readonly payloadIndex: boolean;
  /** `jobsByRequest` finds a request's jobs without reading whole states; off: NotSupportedError. */
  readonly requestIndex: boolean;
  /**
   * `cancel`: true finds a job by id in any state; "recorded": cancellations are recorded beside the broker and
   * applied at delivery, which cannot look up a waiting job nor tell a finished one; false: NotSupportedError.
   */
  readonly cancellation: boolean | "recorded";
  /** `getJob` finds a job in any state; off: dead letters and this process's running jobs only. */
  readonly jobLookup: boolean;
  /** `runNow`, `deleteJob` and `updateJob` of a waiting job; off: NotSupportedError. */
  readonly jobActions: boolean;
  /** The states `listJobs` can list; the others answer NotSupportedError (docs/admin-api.md#listing-jobs). */
  readonly listableStates: readonly ListState[];
  /** Completed and cancelled jobs are stored (job detail, retention); off: `prune` of them deletes none. */
  readonly keepsFinished: boolean;
  /** Task limits (`setLimits` with a non-empty map); off: NotSupportedError. */
  readonly limits: boolean;
  /** Per-key concurrency and rate limits (`setLimits` with `perKey` or `keyRate`, enforced in the claim); off: NotSupportedError. */
  readonly keyedLimits: boolean;
  /** Fair share across keys (`setLimits` with a `fair` limit: keys take turns in the claim); off: NotSupportedError. */
  readonly fairShare: boolean;
  /** Order per key (`setLimits` with `ordered`, blocked keys listed and skipped); off: NotSupportedError. */
  readonly orderPerKey: boolean;
  /** Unique jobs (`enqueue` of a job with a unique key); off: NotSupportedError. */
  readonly unique: boolean;
  /** Debounce (`enqueue` of a job with a debounce key folds into its key's waiting job); off: NotSupportedError at start. */
  readonly debounce: boolean;
  /** Job priorities other than the default; off: NotSupportedError at enqueue. */
  readonly priority: boolean;
  /** `pauseStore`: the backend keeps paused tasks itself, where its claim reads them. */
  readonly pauseStore: boolean;
  /** `throughputStore`: the backend keeps per-minute throughput counts itself. */
  readonly throughputStore: boolean;
  /** Flows and batches (core/backend/flows.ts): steps that run after others, the fan-in kept beside the jobs. */
  readonly flows: boolean;
  /** `workerStore`: workers register and heartbeat where the admin API lists them (docs/worker.md#the-worker-registry). */
  readonly workers: boolean;
}

export type Capability = keyof BackendCapabilities;

/** Where each capability is explained for users. */
const DOCS: Record<Capability, string> = {
  transactionalEnqueue: "jfast docs outbox",
  handOff: "jfast docs backends#capabilities",
  pushesAhead: "jfast docs worker#concurrency",
  leaseThread: "jfast docs worker#leases-and-heartbeats",
  perTaskDepths: "jfast docs backends#capabilities",
  payloadIndex: "jfast docs admin-api#job-search",
  requestIndex: "jfast docs admin-api#timeline",
  cancellation: "jfast docs backends#capabilities",
  jobLookup: "jfast docs backends#capabilities",
  jobActions: "jfast docs backends#capabilities",
  listableStates: "jfast docs admin-api#listing-jobs",
  keepsFinished: "jfast docs queues#retention",
  limits: "jfast docs tasks#limits",
  keyedLimits: "jfast docs flow-control#what-each-backend-enforces",
  fairShare: "jfast docs flow-control#what-each-backend-enforces",
  orderPerKey: "jfast docs flow-control#what-each-backend-enforces",
  unique: "jfast docs tasks#unique-jobs",
  debounce: "jfast docs flow-control#debounce",
  priority: "jfast docs tasks#priority",
  pauseStore: "jfast docs backends#capabilities",
  throughputStore: "jfast docs backends#capabilities",
  flows: "jfast docs flows#backends",
  workers: "jfast docs worker#the-worker-registry",
};

/**
 * The one refusal of a capability that is off: `reason` says why this backend cannot, `hint` what to do instead
 * (default: choose a backend that can), and the docs page is the capability's.
 */
export function notSupported(capability: Capability, reason: string, options: { hint?: string; docs?: string } = {}): NotSupportedError {
  return new NotSupportedError(reason, {
    hint: options.hint ?? `choose a queue backend with ${capability} (the capability table in the docs page)`,
    docs: options.docs ?? DOCS[capability],
  });
}
