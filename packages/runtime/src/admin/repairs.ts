import { TRPCError } from "@trpc/server";
import type { PausedTask } from "../core/pause.js";
import type { CancelResult, JobActionResult } from "../core/queue-backend.js";
import { JfastError } from "../errors/jfast-error.js";
import { actorNameProblem } from "./actor-name.js";
import type { OperatorContext } from "./audit-call.js";
import { discardDeadLetters, retryDeadLetters } from "./operations/dead-letters.js";
import { getFlowView, listFlowsPage, type FlowGetView, type FlowListInput, type FlowListView } from "./flow-views.js";
import { gatherTrace, type TraceView } from "./trace.js";
import { cancelFlow, retryFlowStep } from "./operations/flows.js";
import { cancelJob, deleteWaitingJob, runJobNow } from "./operations/job-actions.js";
import { discardOutboxRows, retryOutboxRows } from "./operations/outbox-rows.js";
import { pauseQueue, pauseTask, resumeQueue, resumeTask } from "./operations/pause-tasks.js";
import { requireQueue } from "./queue-access.js";
import { queueScope } from "./queue-scope.js";
import { changeSchedule } from "./operations/schedules.js";
import { retryDeadWithPayload, updateWaitingJob, type JobUpdateResult } from "./operations/edit-jobs.js";
import type { ScheduleListing, ScheduleSpecInput, ScheduleSpecPatch } from "../scheduler/schedule-control.js";
import type { AdminSources } from "./sources.js";
import { listWorkersView, type WorkersView } from "./worker-views.js";
import { alertHistoryView, listAlertsView, type AlertEventView, type AlertsView } from "./alert-views.js";

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
  /** Replaces a dead letter by a job with an edited payload (`deadLetters.retry` with `payload`); `jobId` names the new job. */
  retryDeadWithPayload(params: { id: string; payload: unknown; queue?: string }): Promise<{ retried: string[]; missing: string[]; jobId: string | null }>;
  /** Deletes the dead letters named, or all of them, for good (`deadLetters.discard`). */
  discardDead(params: RepairSelection & { queue?: string }): Promise<{ discarded: string[]; missing: string[] }>;
  /** Cancels a waiting or running job (`jobs.cancel`); `state: null` when no job has the id. */
  cancelJob(id: string): Promise<CancelResult>;
  /** Makes a scheduled job due now (`jobs.runNow`); `state: null` when no job has the id. */
  runJobNow(id: string): Promise<JobActionResult>;
  /** Deletes a waiting job for good (`jobs.delete`); `state: null` when no job has the id. */
  deleteJob(id: string): Promise<JobActionResult>;
  /** Edits a waiting or scheduled job in place (`jobs.update`): its payload, priority or run time; refused once it is claimed. */
  updateJob(params: { id: string; payload?: unknown; priority?: number; runAt?: Date }): Promise<JobUpdateResult>;
  /** A page of flows as the admin API's flows.list answers it (`jfast flows list`). */
  listFlows(params: FlowListInput): Promise<FlowListView>;
  /** One flow as flows.get answers it (`jfast flows show`). */
  getFlow(id: string): Promise<FlowGetView>;
  /** This service's share of a request's timeline, as trace.get answers it (`jfast trace`). */
  trace(id: string, limit?: number): Promise<TraceView>;
  /** The worker registry as workers.list answers it (`jfast workers`). */
  listWorkers(): Promise<WorkersView>;
  /** Alert rules with their state, and the newest changes of state (`jfast alerts`, docs/alerts.md). */
  listAlerts(params?: { limit?: number }): Promise<{ view: AlertsView; events: AlertEventView[] }>;
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
  /** Schedules at run time (`jfast schedules …`): the admin API's schedules.* on the scheduler's store. */
  schedules: {
    /** Null where there is no shared store (the memory queue). */
    list(params: { count: number }): Promise<ScheduleListing[] | null>;
    create(params: { name: string; spec: ScheduleSpecInput }): Promise<{ name: string; created: true }>;
    update(params: { name: string; patch: ScheduleSpecPatch }): Promise<{ name: string; before: Record<string, unknown>; after: Record<string, unknown> }>;
    pause(name: string): Promise<{ name: string; paused: true; origin: "code" | "runtime"; changed: boolean }>;
    resume(name: string): Promise<{ name: string; paused: false; origin: "code" | "runtime"; changed: boolean }>;
    delete(name: string): Promise<{ name: string; deleted: true }>;
    trigger(name: string): Promise<{ name: string; jobId: string; task: string }>;
  };
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
    retryDeadWithPayload: (params) =>
      scheduleExplained(() => retryDeadWithPayload(ctx, queueScope(requireQueue(sources), params.queue), { id: params.id, payload: params.payload, queueName: params.queue })),
    discardDead: (params) =>
      explained(() => {
        const { queue, selection } = dead(params);
        return discardDeadLetters(ctx, queue, selection);
      }),
    cancelJob: (id) => explained(() => cancelJob(ctx, id)),
    runJobNow: (id) => explained(() => runJobNow(ctx, id)),
    deleteJob: (id) => explained(() => deleteWaitingJob(ctx, id)),
    updateJob: (params) => scheduleExplained(() => updateWaitingJob(ctx, requireQueue(sources), params)),
    listFlows: (params) => explained(() => listFlowsPage(sources, params)),
    getFlow: (id) => explained(() => getFlowView(sources, id)),
    listWorkers: () => explained(() => listWorkersView(sources)),
    listAlerts: (params) =>
      explained(async () => ({ view: await listAlertsView(sources), events: (await alertHistoryView(sources, { limit: params?.limit ?? 100 })).events })),
    trace: (id, limit = 500) => explained(() => gatherTrace(sources, id, limit)),
    cancelFlow: (id) => explained(() => cancelFlow(ctx, id)),
    retryFlowStep: (params) => explained(() => retryFlowStep(ctx, params)),
    retryOutbox: (params) => explained(() => retryOutboxRows(ctx, params)),
    discardOutbox: (params) => explained(() => discardOutboxRows(ctx, params)),
    pauseTask: (task) => explained(() => pauseTask(ctx, task)),
    resumeTask: (task) => explained(() => resumeTask(ctx, task)),
    pauseQueue: (queue) => explained(() => pauseQueue(ctx, queue)),
    resumeQueue: (queue) => explained(() => resumeQueue(ctx, queue)),
    schedules: {
      list: (params) => scheduleExplained(() => changeSchedule.list(ctx, params)),
      create: (params) => scheduleExplained(() => changeSchedule.create(ctx, params)),
      update: (params) => scheduleExplained(() => changeSchedule.update(ctx, params)),
      pause: (name) => scheduleExplained(() => changeSchedule.pause(ctx, { name })),
      resume: (name) => scheduleExplained(() => changeSchedule.resume(ctx, { name })),
      delete: (name) => scheduleExplained(() => changeSchedule.delete(ctx, { name })),
      trigger: (name) => scheduleExplained(() => changeSchedule.trigger(ctx, { name })),
    },
  };
}

/** A schedule refused by the scheduler reaches the program as the scheduler's own error (CRON_INVALID, SCHEDULE_DECLARED, ...). */
async function scheduleExplained<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof TRPCError && error.cause instanceof JfastError) throw error.cause;
    return explained(() => Promise.reject(error));
  }
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
