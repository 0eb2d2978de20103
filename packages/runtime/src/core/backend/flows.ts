import { notSupported } from "./capabilities.js";
import { flowState, type FlowKind, type FlowPlan, type FlowState, type ParentOutcome } from "../flow.js";
import type { JobState } from "../job-state.js";
import type { SqlExecutor } from "../sql-port.js";

/**
 * Flows and batches (docs/flows.md), where `capabilities.flows` is on. The backend keeps each flow beside its
 * jobs and does the fan-in itself: the outcome of a step (complete, kill) counts once for each of its children,
 * in the same transaction or script that writes the outcome, and a child whose parents have all finished
 * becomes ready there. A step's completion is counted once even when its outcome is written twice (the outcome
 * of a job no longer running for that worker changes nothing). Cost per outcome: O(children), never a scan of
 * the flow. Off: every member throws NotSupportedError.
 */
export interface FlowProtocol {
  /**
   * Writes every step of the plan: those with no parent ready (due at their job's `availableAt`), the others
   * `waiting`. All or nothing; a flow id that exists already is a no-op (`created: false`).
   */
  enqueueFlow(params: { flow: FlowPlan }): Promise<{ created: boolean }>;
  /** `enqueueFlow` in the caller's SQL transaction (`capabilities.transactionalEnqueue` and `flows`). */
  enqueueFlowWithin(params: { executor: SqlExecutor; flow: FlowPlan }): Promise<{ created: boolean }>;
  /** What a step reads of its parents (`tools.flow.results`): by job id; a parent neither completed nor dead is absent. */
  parentOutcomes(params: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>>;
  /** Flows newest first, of one state, name or tenant; a page of at most `limit`, continued by `after`. */
  listFlows(params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }>;
  getFlow(params: { id: string }): Promise<FlowDetail | null>;
  /**
   * Cancels every step not finished: waiting and ready steps never run, a running one's worker learns it from its
   * next heartbeat (as `cancel` of a job). Null when there is no such flow.
   */
  cancelFlow(params: { id: string }): Promise<{ cancelled: string[] } | null>;
}

export interface ListFlowsParams {
  state?: FlowState | undefined;
  name?: string | undefined;
  tenantId?: string | undefined;
  limit: number;
  /** `next` of the previous page. */
  after?: string | undefined;
}

export interface FlowSummary {
  id: string;
  name: string | null;
  kind: FlowKind;
  state: FlowState;
  tenantId: string | null;
  createdAt: string;
  /** When its last step finished (completed, or cancelled); null while it runs or has failed. */
  finishedAt: string | null;
  total: number;
  completed: number;
  dead: number;
}

export interface FlowDetail extends FlowSummary {
  steps: Record<string, FlowStepInfo>;
}

export interface FlowStepInfo {
  jobId: string;
  task: string;
  state: JobState;
  after: string[];
  attempts: number;
  /** The step's result, when it completed with one. */
  result?: unknown;
  /** The last error, when it failed (dead, or retrying). */
  error?: { class: string; message: string };
  finishedAt: string | null;
  /**
   * Its last attempt's start and how long it ran (docs/jobs.md#timing): the step's duration. Absent before it ran
   * (on RabbitMQ, where the flow store keeps them from the step's outcome, before it ended).
   */
  startedAt?: string;
  durationMs?: number;
}

/** The members of a backend without flows (`capabilities.flows` off): each throws NotSupportedError with `reason`. */
export function flowsNotSupported(reason: string, hint?: string): FlowProtocol {
  const refuse = async (): Promise<never> => {
    throw notSupported("flows", reason, hint === undefined ? {} : { hint });
  };
  return {
    enqueueFlow: refuse,
    enqueueFlowWithin: refuse,
    parentOutcomes: refuse,
    listFlows: refuse,
    getFlow: refuse,
    cancelFlow: refuse,
  };
}

/** `enqueueFlowWithin` of a queue that cannot write in the caller's SQL transaction: `outbox.flow` goes through the relay. */
export function flowWithinRefused(queue: string): Error {
  return notSupported("transactionalEnqueue", `${queue} cannot write a flow in a SQL transaction`, {
    hint: "outbox.flow writes the flow into the jfast_outbox table in the transaction instead, moved by the relay after commit",
  });
}

/** A row of jfast_flows as the SQL flow stores read it (PostgreSQL's queue, RabbitMQ's store in the database). */
export interface FlowTableRow {
  id: string;
  name: string | null;
  kind: FlowSummary["kind"];
  tenant_id: string | null;
  created_at: Date | string;
  finished_at: Date | string | null;
  total: number | string;
  completed: number | string;
  dead: number | string;
  cancelled: boolean;
}

export function flowSummaryOfRow(row: FlowTableRow): FlowSummary {
  const counts = { cancelled: row.cancelled, total: Number(row.total), completed: Number(row.completed), dead: Number(row.dead) };
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    state: flowState(counts),
    tenantId: row.tenant_id,
    createdAt: new Date(row.created_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
    total: counts.total,
    completed: counts.completed,
    dead: counts.dead,
  };
}

/** A step's last recorded error as flows.get shows it. */
export function stepError(error: { class?: string; message?: string } | null): { class: string; message: string } {
  return { class: error?.class ?? "Error", message: error?.message ?? "" };
}
