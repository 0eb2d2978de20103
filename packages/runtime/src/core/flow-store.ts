import type { FlowDetail, FlowSummary, ListFlowsParams } from "./backend/flows.js";
import type { FlowPlanJSON, ParentOutcome } from "./flow.js";
import type { JobJSON } from "./job.js";
import type { AttemptRun } from "./job-life.js";
import type { JobState } from "./job-state.js";
import type { PruneSelection } from "./retention.js";
import type { StoredResult } from "./result.js";
import type { StoredParts, StoredRewriteResult } from "./stored-rewrite.js";

/**
 * Where a queue whose broker cannot hold a step back until its parents finish (RabbitMQ) keeps its flows: the
 * service's database (jfast_flows, jfast_flow_steps; queue/flow-stores.ts), shared by every process. The fan-in is
 * here: an outcome and its count for the step's children commit together, conditional on the step's state, so
 * an outcome written twice counts once. The backend publishes the steps made ready after the commit, then marks
 * them published; a step ready and not published after `leaseMs` is the sweep's (`takeUnpublished`).
 * docs/rabbitmq.md#flows
 */
export interface FlowStore {
  readonly kind: "sql";
  /** Writes the flow and all its steps, or nothing when its id exists (`created: false`); the steps to publish. */
  create(params: { flow: FlowPlanJSON; leaseMs: number }): Promise<{ created: boolean; ready: JobJSON[] }>;
  /**
   * Completes a step that is ready (running) or dead (retried meanwhile), with its result and the steps it spawned,
   * and counts it once for each child; `completed: false` and nothing written when it had finished already. `run`
   * (the attempt's record) gives the step its start and duration (flows.get), in the same write.
   */
  complete(params: { job: JobJSON; result: StoredResult | undefined; spawn: FlowPlanJSON["steps"] | undefined; leaseMs: number; run?: AttemptRun | undefined }): Promise<StepOutcome>;
  /**
   * The step died (`job` as it ended, its errors with it): counted once for its onParentFailure = "run" children.
   * `run` as for complete; absent when the attempt has no record (its worker was lost).
   */
  die(params: { job: JobJSON; leaseMs: number; run?: AttemptRun | undefined }): Promise<StepOutcome>;
  /** Dead steps retried from the dead letters: ready again (their message republished), their flow runs again. */
  revive(params: { jobIds: string[] }): Promise<void>;
  /** Their messages are in the broker. */
  published(params: { jobIds: string[] }): Promise<void>;
  /** Ready steps not published whose time passed, taken for another `leaseMs` (the sweep). */
  takeUnpublished(params: { limit: number; leaseMs: number }): Promise<JobJSON[]>;
  /**
   * A step's message came back (redelivered): its state, and its children made ready and not yet published, taken
   * for `leaseMs` to publish. Null when the step is not in the store.
   */
  recover(params: { jobId: string; leaseMs: number }): Promise<{ state: StepState; job: JobJSON; ready: JobJSON[] } | null>;
  /** A step as getJob shows it; null when it is not in the store. */
  step(params: { jobId: string }): Promise<{ state: StepState; job: JobJSON; finishedAt: string | null } | null>;
  parentOutcomes(params: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>>;
  list(params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }>;
  get(params: { id: string }): Promise<FlowDetail | null>;
  /**
   * Retention (keep_completed): finished flows deleted with their steps, at most `limit` flows; how many steps went.
   * A failed flow is kept.
   */
  prune(params: { select: PruneSelection; limit: number }): Promise<number>;
  /**
   * `jfast keys rotate`: the jobs of steps still in the database (waiting, or ready and not published) rewritten,
   * each only if unchanged and still there when written; how many were, and those `rewrite` threw for.
   */
  rewriteWaiting(params: { rewrite(parts: StoredParts): StoredParts | null }): Promise<{ rewritten: number; skipped: StoredRewriteResult["skipped"] }>;
  /** A job cancelled by id: when it is an unfinished step, the step is cancelled (its flow is not). */
  cancelStep(params: { jobId: string }): Promise<void>;
  /** Every unfinished step cancelled and recorded as a cancelled job (CancelStore), in one transaction. */
  cancel(params: { id: string }): Promise<{ cancelled: string[] } | null>;
}

export type StepState = Extract<JobState, "waiting" | "ready" | "completed" | "dead" | "cancelled">;

export interface StepOutcome {
  /** False when the step had finished already: nothing was written, nothing counted. */
  written: boolean;
  /** Children made ready by it, to publish. */
  ready: JobJSON[];
}

/** Why a queue without a flow store refuses flows, and the fix: one text for the backend and `queue.flow`. */
export const FLOW_STORE_MISSING = {
  reason: "a RabbitMQ queue keeps its flows in the service's database, and this service has none",
  hint: 'add "database" to [plugins] enabled: RabbitMQ keeps flows in the service\'s database',
} as const;
