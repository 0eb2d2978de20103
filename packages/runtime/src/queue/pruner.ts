import { randomUUID } from "node:crypto";
import type { QueueBackend } from "../core/queue-backend.js";
import { pruneSelection, RETAINED_STATES, type RetainedState, type Retention } from "../core/retention.js";
import type { Logger } from "../observability/logger.js";

/** One statement or script deletes at most this many jobs: short locks, short scripts, however much is due. */
export const PRUNE_BATCH = 1000;

export interface PrunedQueue {
  /** What /metrics calls the queue: the backend's name for it. */
  label: string;
  backend: QueueBackend;
  retention: Record<RetainedState, Retention>;
}

/** What /metrics reads: jobs this process pruned since it started, and when its last run ended. */
export interface PrunerStatus {
  /** By queue label, then state. */
  pruned: ReadonlyMap<string, Readonly<Record<RetainedState, number>>>;
  /** Epoch ms of the end of the last run this process made, by queue label (absent: none yet). */
  lastRunAt: ReadonlyMap<string, number>;
  lastError: string | null;
}

export interface Pruner {
  /** One pass over every queue now, as the timer makes it; resolves with what this pass pruned per queue. */
  runOnce(): Promise<Map<string, Record<RetainedState, number>>>;
  status(): PrunerStatus;
  /** Stops the timer and waits for a pass in flight. */
  stop(): Promise<void>;
}

/**
 * The pruner (docs/queues.md#retention). Every process runs one; on each pass it claims each queue's lease in the
 * queue's own store (QueueBackend.claimPruner) and prunes only the queues it won, so two processes never prune the
 * same queue at once. The lease lasts the interval, and a pass stops taking batches once half of it is spent, so
 * the lease never runs out under a pass that is still deleting; what is left goes on the next pass.
 */
export function createPruner(params: {
  queues: readonly PrunedQueue[];
  intervalMs: number;
  logger: Logger;
  /** Who holds the lease; one per process. */
  owner?: string;
  batch?: number;
  now?: () => number;
}): Pruner {
  const owner = params.owner ?? `pruner-${randomUUID()}`;
  const batch = params.batch ?? PRUNE_BATCH;
  const now = params.now ?? Date.now;
  const pruned = new Map<string, Record<RetainedState, number>>();
  const lastRunAt = new Map<string, number>();
  let lastError: string | null = null;
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  async function pruneQueue(queue: PrunedQueue): Promise<Record<RetainedState, number> | null> {
    const selections = RETAINED_STATES.map((state) => [state, pruneSelection(queue.retention[state], now())] as const).filter(([, s]) => s !== null);
    // No selection still claims the queue: the deadline sweep runs under the same lease (docs/flow-control.md#deadlines).
    if (!(await queue.backend.claimPruner({ owner, ttlMs: params.intervalMs }))) return null;
    const deadline = now() + params.intervalMs / 2;
    const counts: Record<RetainedState, number> = { completed: 0, dead: 0, cancelled: 0, expired: 0 };
    const total = pruned.get(queue.label) ?? { completed: 0, dead: 0, cancelled: 0, expired: 0 };
    pruned.set(queue.label, total);
    try {
      while (!stopped && now() < deadline) {
        const expired = await queue.backend.expireDue({ limit: batch });
        if (expired > 0) params.logger.info("jobs reached their deadline before any claim: expired", { queue: queue.label, expired });
        if (expired < batch) break;
      }
      // Per-key bookkeeping of keys with no open job (docs/flow-control.md#pruning-per-key-state).
      while (!stopped && now() < deadline) {
        const keys = await queue.backend.pruneKeys({ limit: batch });
        if (keys < batch) break;
      }
      for (const [state, select] of selections) {
        while (!stopped && now() < deadline) {
          const deleted = await queue.backend.prune({ state, select: select!, limit: batch });
          counts[state] += deleted;
          total[state] += deleted;
          if (deleted < batch) break;
        }
      }
      lastRunAt.set(queue.label, now());
    } finally {
      await queue.backend.releasePruner({ owner }).catch(() => undefined);
    }
    return counts;
  }

  async function pass(): Promise<Map<string, Record<RetainedState, number>>> {
    const result = new Map<string, Record<RetainedState, number>>();
    for (const queue of params.queues) {
      try {
        const counts = await pruneQueue(queue);
        if (!counts) continue;
        result.set(queue.label, counts);
        if (counts.completed + counts.dead + counts.cancelled + counts.expired > 0) params.logger.debug("pruned finished jobs", { queue: queue.label, ...counts });
        lastError = null;
      } catch (error) {
        lastError = (error as Error).message;
        params.logger.warn("pruning finished jobs failed; the next pass tries again", { queue: queue.label, error });
      }
    }
    return result;
  }

  function runOnce(): Promise<Map<string, Record<RetainedState, number>>> {
    const run = chain.catch(() => undefined).then(pass);
    chain = run;
    return run;
  }

  let ticking = false;
  const tick = () => {
    if (ticking || stopped) return;
    ticking = true;
    void runOnce().finally(() => (ticking = false));
  };
  timer = setInterval(tick, params.intervalMs);
  timer.unref();

  return {
    runOnce,
    status: () => ({ pruned, lastRunAt, lastError }),
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await chain.catch(() => undefined);
    },
  };
}
