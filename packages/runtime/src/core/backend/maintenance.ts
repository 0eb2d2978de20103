import type { PauseStore } from "../pause.js";
import type { PruneParams } from "../retention.js";
import type { ThroughputStore } from "../throughput.js";

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
}
