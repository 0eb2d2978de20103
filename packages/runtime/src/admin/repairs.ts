import { TRPCError } from "@trpc/server";
import type { PausedTask } from "../core/pause.js";
import type { CancelResult, JobActionResult } from "../core/queue-backend.js";
import { JfastError } from "../errors/jfast-error.js";
import { actorNameProblem } from "./actor-name.js";
import type { OperatorContext } from "./audit-call.js";
import { discardDeadLetters, retryDeadLetters } from "./operations/dead-letters.js";
import { getFlowView, listFlowsPage, type FlowGetView, type FlowListInput, type FlowListView } from "./flow-views.js";
import { cancelFlow, retryFlowStep } from "./operations/flows.js";
import { cancelJob, deleteWaitingJob, runJobNow } from "./operations/job-actions.js";
import { discardOutboxRows, retryOutboxRows } from "./operations/outbox-rows.js";
import { pauseQueue, pauseTask, resumeQueue, resumeTask } from "./operations/pause-tasks.js";
import { requireQueue } from "./queue-access.js";
import { queueScope } from "./queue-scope.js";
import type { AdminSources } from "./sources.js";

/** Dead letters or dead outbox rows by id, or every one (`--all`). */
export type RepairSelection = { ids: string[] } | { all: true };

/**
 * The admin API's repairs for a program in the service's own process (`jfast jobs retry`, `jfast queue pause`),
 * and the views of flows `jfast flows` prints: the same operations the admin API runs, audited the same way, with `actor` as who did it
 * (docs/admin-api.md#audit-trail). Whoever runs them holds the service's configuration and credentials already,
 * so there is no token to check.
 */
export interface AdminRepairs {
  /** Where the entries go: the service's database (`sql`), or this process's memory and logs (no database plugin). */
  readonly auditStore: "memory" | "sql";
  /** Requeues the dead letters named, or all of them; `queue` picks a named queue (default: `default`). */
  retryDead(params: RepairSelection & { queue?: string }): Promise<{ retried: string[]; missing: string[] }>;
  /** Deletes the dead letters named, or all of them, for good (`deadLetters.discard`). */
  discardDead(params: RepairSelection & { queue?: string }): Promise<{ discarded: string[]; missing: string[] }>;
  /** Cancels a waiting or running job (`jobs.cancel`); `state: null` when no job has the id. */
  cancelJob(id: string): Promise<CancelResult>;
  /** Makes a scheduled job due now (`jobs.runNow`); `state: null` when no job has the id. */
  runJobNow(id: string): Promise<JobActionResult>;
  /** Deletes a waiting job for good (`jobs.delete`); `state: null` when no job has the id. */
  deleteJob(id: string): Promise<JobActionResult>;
  /** A page of flows as the admin API's flows.list answers it (`jfast flows list`). */
  listFlows(params: FlowListInput): Promise<FlowListView>;
  /** One flow as flows.get answers it (`jfast flows show`). */
  getFlow(id: string): Promise<FlowGetView>;
  /** Cancels every step of a flow not yet finished (`flows.cancel`); null when no flow has the id. */
  cancelFlow(id: string): Promise<{ cancelled: string[]; queue: string } | null>;
  /** Retries a dead step of a flow (`flows.retryStep`), which resumes the flow; refused for a step that is not dead. */
  retryFlowStep(params: { id: string; step: string }): Promise<{ jobId: string; queue: string }>;
  /** Gives dead outbox rows back to the relay (`outbox.retry`). */
  retryOutbox(params: RepairSelection): Promise<{ retried: string[]; missing: string[] }>;
  /** Deletes dead outbox rows for good (`outbox.discard`). */
  discardOutbox(params: RepairSelection): Promise<{ discarded: string[]; missing: string[] }>;
  pauseTask(task: string): Promise<PausedTask>;
  /** True when the task was paused. */
  resumeTask(task: string): Promise<boolean>;
  pauseQueue(queue: string): Promise<PausedTask[]>;
  resumeQueue(queue: string): Promise<{ tasks: string[]; resumed: number }>;
}

export function createRepairs(sources: AdminSources, actor: string): AdminRepairs {
  const problem = actorNameProblem(actor);
  if (problem !== null) {
    throw new JfastError(`${JSON.stringify(actor.slice(0, 80))} cannot be the actor of repairs: ${problem}`, {
      code: "ACTOR_INVALID",
      hint: "name who acts with printable characters, at most 200 of them (jfast … --as ops-oncall)",
      docs: "jfast docs admin-api#audit-trail",
    });
  }
  const ctx: OperatorContext = { principal: { name: actor, role: "operator" }, sources, tokensConfigured: true, presented: actor };
  const dead = (params: RepairSelection & { queue?: string }) => {
    const queue = queueScope(requireQueue(sources), params.queue);
    return { queue, selection: "all" in params ? { all: true as const, queueName: params.queue } : { ids: params.ids, queueName: params.queue } };
  };
  return {
    get auditStore() {
      return sources.audit.kind;
    },
    retryDead: (params) =>
      explained(() => {
        const { queue, selection } = dead(params);
        return retryDeadLetters(ctx, queue, selection);
      }),
    discardDead: (params) =>
      explained(() => {
        const { queue, selection } = dead(params);
        return discardDeadLetters(ctx, queue, selection);
      }),
    cancelJob: (id) => explained(() => cancelJob(ctx, id)),
    runJobNow: (id) => explained(() => runJobNow(ctx, id)),
    deleteJob: (id) => explained(() => deleteWaitingJob(ctx, id)),
    listFlows: (params) => explained(() => listFlowsPage(sources, params)),
    getFlow: (id) => explained(() => getFlowView(sources, id)),
    cancelFlow: (id) => explained(() => cancelFlow(ctx, id)),
    retryFlowStep: (params) => explained(() => retryFlowStep(ctx, params)),
    retryOutbox: (params) => explained(() => retryOutboxRows(ctx, params)),
    discardOutbox: (params) => explained(() => discardOutboxRows(ctx, params)),
    pauseTask: (task) => explained(() => pauseTask(ctx, task)),
    resumeTask: (task) => explained(() => resumeTask(ctx, task)),
    pauseQueue: (queue) => explained(() => pauseQueue(ctx, queue)),
    resumeQueue: (queue) => explained(() => resumeQueue(ctx, queue)),
  };
}

/** An admin API refusal, as the error a program (the CLI) reports: its message, a code, the docs page. */
async function explained<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    // A backend that cannot do this (NOT_SUPPORTED) says why and names its own fix and docs page.
    if (error.code === "METHOD_NOT_SUPPORTED" && error.cause instanceof JfastError) throw error.cause;
    throw new JfastError(error.message, { code: `ADMIN_${error.code}`, docs: "jfast docs admin-api#audit-trail", cause: error.cause ?? error });
  }
}
