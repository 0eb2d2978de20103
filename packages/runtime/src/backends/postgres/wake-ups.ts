import type { Logger } from "../../core/logger.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { CommitWatch } from "./commit-watch.js";
import { NotifyCoalescer, WAKE_WINDOW_MS } from "./wake-coalescer.js";

/**
 * How the backend wakes idle workers for new jobs, never from inside the enqueuing transaction
 * (docs/postgres.md#the-wake-up-of-an-enqueue): after its own commit, through the coalescer; after a caller's
 * write, by the look-up that sees it committed (CommitWatch).
 */
export interface WakeUps {
  /**
   * `write` is one statement of the backend's own. It is given the channel to NOTIFY in itself when no wake-up
   * went in the last window (the wake-up then rides its commit, with no round trip after it), else null and the
   * wake-up follows its commit, coalesced.
   */
  ownStatement(write: (notify: string | null) => Promise<EnqueueResult>): Promise<EnqueueResult>;
  /** `write` committed when it resolves (the backend's own statement or transaction). */
  afterCommit(write: Promise<EnqueueResult>): Promise<EnqueueResult>;
  /** `write` ran in a caller's transaction, which commits later or never. */
  afterCallerWrite(write: Promise<EnqueueResult>): Promise<EnqueueResult>;
  /** What the backend committed left jobs ready (the in-process hand-off's remainder). */
  committed(): void;
  close(): Promise<void>;
}

export function createWakeUps(params: { db: SqlExecutor; channel: string; logger?: Pick<Logger, "warn"> | undefined }): WakeUps {
  const coalescer = new NotifyCoalescer(params);
  const watch = new CommitWatch({ db: params.db, channel: params.channel, gapMs: WAKE_WINDOW_MS, logger: params.logger });
  return {
    async afterCommit(write) {
      const result = await write;
      if (result.inserted.length > 0) coalescer.wake();
      return result;
    },
    async ownStatement(write) {
      const notify = coalescer.lead() ? params.channel : null;
      const result = await write(notify);
      if (notify === null && result.inserted.length > 0) coalescer.wake();
      return result;
    },
    async afterCallerWrite(write) {
      const result = await write;
      watch.watch(result.inserted);
      return result;
    },
    committed: () => coalescer.wake(),
    async close() {
      await watch.close();
      await coalescer.close();
    },
  };
}
