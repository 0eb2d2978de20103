import type { FlowPlan, FlowPlanStep, JobFlow, ParentOutcome } from "../../core/flow.js";
import { flowSummaryOfRow, stepError, type FlowDetail, type FlowStepInfo, type FlowSummary, type FlowTableRow, type ListFlowsParams } from "../../core/backend/flows.js";
import { JobState } from "../../core/job-state.js";
import type { CompleteParams, EnqueueResult } from "../../core/queue-backend.js";
import type { StoredResult } from "../../core/result.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { PREPARED, type PgQueue } from "./context.js";
import { translate } from "./errors.js";
import { jobsToColumns, numberArray, resultArrays, textArray, toIso, toIsoOrNull } from "./job-rows.js";
import { SQL } from "./load-sql.js";
import { stepTiming, type AttemptRun } from "../../core/job-life.js";
import { runsArray } from "./outcomes.js";

/**
 * Flows on the PostgreSQL queue (docs/postgres.md#flows): the steps are rows of jfast_jobs with their flow columns
 * (migration 0024), the flow a row of jfast_flows. The fan-in is complete-flow.sql (a completion) and the dead-letter
 * counters' statement trigger (migration 0026: a death, a dead step retried): each counts a step's outcome in the
 * statement that writes it.
 */

/** Flows read at most per page of listFlows, whatever its filters (list-flows.sql). */
const LIST_FLOWS_WINDOW = 1000;
/** A completion of flow steps that lost a deadlock is written again (it wrote nothing): this many times at most. */
const DEADLOCK_RETRIES = 5;

export function enqueueFlow(q: PgQueue, { flow }: { flow: FlowPlan }): Promise<{ created: boolean }> {
  const write = writeFlow(q, q.db, flow);
  return created(write, q.wakeUps.afterCommit(write));
}

/** In the caller's transaction (outbox.flow): workers are woken once a look-up sees the ready steps committed. */
export function enqueueFlowWithin(q: PgQueue, { executor, flow }: { executor: SqlExecutor; flow: FlowPlan }): Promise<{ created: boolean }> {
  const write = writeFlow(q, executor, flow);
  return created(write, q.wakeUps.afterCallerWrite(write));
}

async function created(write: Promise<{ created: boolean }>, woken: Promise<EnqueueResult>): Promise<{ created: boolean }> {
  await woken;
  return { created: (await write).created };
}

/** enqueue-flow.sql; `inserted` holds the steps written ready (what the wake-up is for). */
async function writeFlow(q: PgQueue, executor: SqlExecutor, flow: FlowPlan): Promise<EnqueueResult & { created: boolean }> {
  const params = [q.queue, ...stepColumns(flow.steps), flow.id, flow.name, flow.kind, flow.tenantId, flow.createdAt];
  const [row] = await q.run("enqueueFlow", () => executor.query<{ created: string | number }>(SQL.enqueueFlow, params));
  const isNew = Number(row?.created) > 0;
  return { created: isNew, inserted: isNew ? flow.steps.filter((step) => step.pending === 0).map((step) => step.job.id) : [] };
}

/** The steps' columns, $2-$19 of enqueue-flow.sql and spawn-steps.sql: the jobs' (jobsToColumns), then their flow's. */
function stepColumns(steps: readonly FlowPlanStep[], extraPending: (step: FlowPlanStep) => number = () => 0): Array<string | null> {
  return [
    ...jobsToColumns(steps.map((step) => step.job)),
    textArray(steps.map((step) => JSON.stringify(step.job.flow))),
    textArray(steps.map((step) => JSON.stringify(step.children))),
    numberArray(steps.map((step) => step.pending + extraPending(step))),
  ];
}

/**
 * complete-flow.sql for a batch of one worker's flow steps: completed, and counted for their children and flows,
 * in one statement. A deadlock (the other statement then went through) rolled all of it back: written again.
 */
export function completeSteps(q: PgQueue, ids: string[], workerId: string, results?: Array<StoredResult | undefined>, runs?: Array<AttemptRun | undefined>): Promise<void> {
  const [values, omitted] = results ? resultArrays(results) : [null, null];
  const records = runsArray(runs, ids.length);
  return retryingDeadlocks(q, async () => {
    await q.db.query(SQL.completeFlow, [textArray(ids), workerId, values, omitted, q.channel, null, records], PREPARED.completeFlow);
  });
}

/**
 * A step's completion with the steps it spawned (tools.flow.spawn), in one transaction: spawn-steps.sql writes
 * them (only while the step is this worker's), then complete-flow.sql completes the step, counts it for its
 * children, the spawned ones among them, and adds them to the flow's total.
 */
export function completeSpawning(q: PgQueue, { workerId, job, result, spawn, run }: CompleteParams & { spawn: FlowPlanStep[] }): Promise<void> {
  const parent = job.flow!;
  // The steps directly after the spawning one: it counts for them at its completion, as for its other children.
  const direct = (step: FlowPlanStep) => (step.job.flow?.after[parent.step] === job.id ? 1 : 0);
  const params = [q.queue, ...stepColumns(spawn, direct), job.id, workerId, textArray(spawn.filter((step) => direct(step) === 1).map((step) => step.job.id))];
  const [values, omitted] = result ? resultArrays([result]) : [null, null];
  return retryingDeadlocks(q, () =>
    q.db.transaction(async (tx) => {
      const [row] = await tx.query<{ owned: string | number; inserted: string | number }>(SQL.spawnSteps, params);
      if (Number(row?.owned) === 0) return;
      await tx.query(SQL.completeFlow, [textArray([job.id]), workerId, values, omitted, q.channel, numberArray([Number(row!.inserted)]), runsArray(run && [run], 1)], PREPARED.completeFlow);
    }),
  );
}

/** Runs `write` (one statement or transaction, all or nothing) again when it lost a deadlock, at most DEADLOCK_RETRIES times. */
async function retryingDeadlocks(q: PgQueue, write: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: unknown })?.code !== "40P01" || attempt > DEADLOCK_RETRIES) throw translate(error, "complete", q.schema);
    }
  }
}

export async function parentOutcomes(q: PgQueue, { jobIds }: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>> {
  const outcomes = new Map<string, ParentOutcome>();
  if (jobIds.length === 0) return outcomes;
  type Row = { id: string; state: string; result: unknown; has_result: boolean; last_error: { class?: string; message?: string } | null };
  const rows = await q.run("parentOutcomes", () => q.db.query<Row>(SQL.flowParents, [q.queue, textArray(jobIds)]));
  for (const row of rows) {
    if (row.state === JobState.completed) outcomes.set(row.id, { state: "completed", result: row.has_result ? row.result : undefined });
    else outcomes.set(row.id, { state: "dead", error: stepError(row.last_error) });
  }
  return outcomes;
}


export async function listFlows(q: PgQueue, params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }> {
  const after = params.after === undefined ? null : Number(params.after);
  if (after !== null && !Number.isSafeInteger(after)) return { rows: [], next: null };
  type Row = FlowTableRow & { seq: string | number | null; edge_seq: string | number | null; scanned: string | number };
  const rows = await q.run("listFlows", () =>
    q.reader.query<Row>(SQL.listFlows, [q.queue, params.state ?? null, params.name ?? null, params.tenantId ?? null, params.limit + 1, after, LIST_FLOWS_WINDOW]),
  );
  const page = rows.filter((row) => row.id !== null);
  const summary = rows[0];
  let next: string | null = null;
  if (page.length > params.limit) next = String(page[params.limit - 1]!.seq);
  else if (summary && Number(summary.scanned) >= LIST_FLOWS_WINDOW && summary.edge_seq !== null) next = String(summary.edge_seq);
  return { rows: page.slice(0, params.limit).map(flowSummaryOfRow), next };
}

export async function getFlow(q: PgQueue, { id }: { id: string }): Promise<FlowDetail | null> {
  type Row = FlowTableRow & {
    job_id: string | null;
    task: string;
    state: JobState;
    flow: JobFlow;
    attempts: number;
    result: unknown;
    has_result: boolean;
    last_error: { class?: string; message?: string } | null;
    step_finished_at: Date | string | null;
    died_at: Date | string | null;
    last_run: AttemptRun | null;
  };
  const rows = await q.run("getFlow", () => q.db.query<Row>(SQL.getFlow, [q.queue, id]));
  if (rows.length === 0) return null;
  const steps: Record<string, FlowStepInfo> = {};
  for (const row of rows) {
    if (row.job_id === null) continue;
    steps[row.flow.step] = {
      jobId: row.job_id,
      task: row.task,
      state: row.state,
      after: Object.keys(row.flow.after),
      attempts: Number(row.attempts),
      ...(row.state === JobState.completed && row.has_result ? { result: row.result } : {}),
      ...(row.last_error && row.state !== JobState.completed ? { error: stepError(row.last_error) } : {}),
      finishedAt: toIsoOrNull(row.step_finished_at ?? row.died_at),
      ...stepTiming(row.last_run),
    };
  }
  return { ...flowSummaryOfRow(rows[0]!), steps };
}

export async function cancelFlow(q: PgQueue, { id }: { id: string }): Promise<{ cancelled: string[] } | null> {
  const [row] = await q.run("cancelFlow", () => q.db.query<{ found: boolean; cancelled: string[] | null }>(SQL.cancelFlow, [q.queue, id]));
  return row?.found ? { cancelled: row.cancelled ?? [] } : null;
}


