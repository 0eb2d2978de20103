import type { LimitedTasks } from "../../core/backend/limited-tasks.js";
import type { SlotOffers } from "../../core/backend/slot-offers.js";
import type { SqlDatabase, SqlExecutor } from "../../core/sql-port.js";
import type { BackendLogger } from "./postgres-backend.js";
import type { WakeUps } from "./wake-ups.js";

/** What every operation of the PostgreSQL queue (enqueue.ts, claim.ts, outcomes.ts, admin.ts, maintenance.ts) works on. */
export interface PgQueue {
  readonly db: SqlDatabase;
  /** The views' reads (see PostgresBackendOptions.reader). */
  readonly reader: SqlExecutor;
  readonly queue: string;
  readonly schema: string;
  /** The queue's NOTIFY channel. */
  readonly channel: string;
  readonly logger: BackendLogger | undefined;
  readonly wakeUps: WakeUps;
  /** Idle workers of this process offering their free slots to jobs enqueued here (offerSlots). */
  readonly offers: SlotOffers;
  /** The queue's limited tasks (setLimits): none, the claim is claim.sql alone, as without limits. */
  readonly limited: LimitedTasks;
  /** claim.sql as durable_claims asks: with synchronous_commit off for its transaction (default), or not. */
  readonly claimSql: { all: string; one: string; prepared: { name: string } };
  /** claim-fair.sql run on its own (a fair task that counts nothing at claim), as durable_claims asks. */
  readonly claimFairSql: { text: string; prepared: { name: string } };
  /** Claims of the queue's fair tasks so far: every other one lets the queue's other jobs go first (claim.ts). */
  fairClaims: number;
  /**
   * The wake-ups (NOTIFY of an enqueue) this process has received on the channel, or null while it does not listen
   * (it listens from a worker's first idle wait on): a count that moved means jobs were enqueued since.
   */
  wakeUpsSeen(): number | null;
  /** Starts listening for wake-ups now, if it does not yet (in the background; a failure is logged). */
  listen(): void;
  /**
   * Set when a claim beside fair tasks found none of the queue's other jobs: until `until`, and while no wake-up
   * came after `seen`, the next claims do not look for them again (claim.ts).
   */
  othersQuiet: { until: number; seen: number } | null;
  /** Runs `fn`, translating a driver error into a BackendError naming `operation` (errors.ts). */
  run<T>(operation: string, fn: () => Promise<T>): Promise<T>;
}

/**
 * The statements every worker runs over and over are prepared once per connection: parsing and planning the
 * claim cost as much as running it for a single job. A generic plan PostgreSQL may settle on after a few runs
 * has the custom plans' shape, since every branch reads through an index matching its predicate and key
 * (test/postgres/claim-plan.test.ts checks the prepared claim too).
 */
export const PREPARED = {
  enqueue: { name: "jfast_enqueue" },
  enqueueFresh: { name: "jfast_enqueue_fresh" },
  enqueueNotifying: { name: "jfast_enqueue_notifying" },
  enqueueFreshNotifying: { name: "jfast_enqueue_fresh_notifying" },
  enqueueHandOff: { name: "jfast_enqueue_hand_off" },
  claim: { name: "jfast_claim" },
  claimDurable: { name: "jfast_claim_durable" },
  claimLimitsLock: { name: "jfast_claim_limits_lock" },
  claimLimited: { name: "jfast_claim_limited" },
  claimKeyed: { name: "jfast_claim_keyed" },
  claimFair: { name: "jfast_claim_fair" },
  claimFairAlone: { name: "jfast_claim_fair_alone" },
  fairPlace: { name: "jfast_fair_place" },
  complete: { name: "jfast_complete" },
  completeDelete: { name: "jfast_complete_delete" },
  completeResults: { name: "jfast_complete_results" },
  completeTimed: { name: "jfast_complete_timed" },
  completeFlow: { name: "jfast_complete_flow" },
  extendLeases: { name: "jfast_extend_leases" },
  nextDue: { name: "jfast_next_due" },
} as const;
