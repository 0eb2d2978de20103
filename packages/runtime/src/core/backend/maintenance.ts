import type { PauseStore } from "../pause.js";
import type { PruneParams } from "../retention.js";
import type { ThroughputStore } from "../throughput.js";
import type { WorkerStore } from "./workers.js";

/** What keeps a queue tidy (docs/queues.md#retention), and the stores a backend can keep for the service. */
export interface Maintenance {
  /**
   * Deletes one bounded batch of finished jobs in `state` (docs/queues.md#retention): those that finished (or died)
   * before `select.before`, or every one but the newest `select.keepNewest`; at most `limit`, oldest first, never
   * waiting on a job another call holds. Returns how many went. A backend that stores no job in that state
   * (`capabilities.keepsFinished` off) returns 0.
   */
  prune(params: PruneParams): Promise<number>;
  /**
   * The pruner's claim on this queue: true when no other pruner, in any process, holds it; then it is `owner`'s
   * until `releasePruner` or, should the owner vanish, until `ttlMs` has passed. One pruner at a time per queue.
   */
  claimPruner(params: { owner: string; ttlMs: number }): Promise<boolean>;
  /**
   * The deadline sweep (docs/flow-control.md#deadlines): ends `expired` up to `limit` jobs waiting past their deadline
   * that no claim reached in time, and returns how many. The pruner calls it under its lease; the claim ends the
   * others. A backend that cannot find them (RabbitMQ: a message waits inside the broker) returns 0.
   */
  expireDue(params: { limit: number }): Promise<number>;
  /**
   * Per-key bookkeeping of keys with no open job (docs/flow-control.md#pruning-per-key-state): keys left in a fair
   * task's turn order, turn counts, rate windows past their span, an ordered key's finished head. At most about
   * `limit` of each kind; returns how many went. The pruner calls it under its lease until it returns less than a
   * batch; a key with an open job keeps all of its state. A backend that keeps none (RabbitMQ) returns 0.
   */
  pruneKeys(params: { limit: number }): Promise<number>;
  releasePruner(params: { owner: string }): Promise<void>;
  /**
   * `capabilities.pauseStore` (Redis): the backend's own store of paused tasks, which its claim reads itself. Off:
   * the service keeps paused tasks in its database, or in memory for the memory queue (core/pause.ts).
   */
  pauseStore(): PauseStore;
  /**
   * `capabilities.throughputStore` (Redis, with expiring keys): per-minute throughput counts kept by the backend,
   * used when the service has no database. Off: the database, else memory (core/throughput.ts).
   */
  throughputStore(): ThroughputStore;
  /**
   * `capabilities.workers`: where this queue's workers register and heartbeat (core/backend/workers.ts): a table
   * (PostgreSQL, RabbitMQ with the service's database), a Redis hash, this process's memory. Off: NotSupportedError.
   */
  workerStore(): WorkerStore;
}
