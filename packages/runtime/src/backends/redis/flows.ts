import { flowState, type FlowKind, type FlowPlan, type FlowPlanStep, type ParentOutcome } from "../../core/flow.js";
import type { CompleteParams } from "../../core/queue-backend.js";
import type { FlowDetail, FlowStepInfo, FlowSummary, ListFlowsParams } from "../../core/backend/flows.js";
import { LIST_WINDOW } from "../../core/job-listing.js";
import { JobState } from "../../core/job-state.js";
import { parseRuns, stepTiming } from "../../core/job-life.js";
import { announceBatch, packJob, type RedisQueue } from "./context.js";
import { decodeJobForDisplay, msToIso } from "./decode.js";
import { resultOfHash } from "./results.js";

/**
 * Flows in the Redis queue (docs/redis.md#flows): a flow is written whole by enqueue-flow.lua; from then on the
 * scripts that write a step's outcome (complete, kill, the worker-lost path of claim and recover, retry-dead) do
 * its fan-in in the same call. What is here reads flows back and starts the two scripts of their own.
 */
export async function enqueueFlow(q: RedisQueue, { flow }: { flow: FlowPlan }): Promise<{ created: boolean }> {
  const args: Array<string | number> = [flow.id, flow.name ?? "", flow.kind, flow.tenantId ?? "", Date.parse(flow.createdAt)];
  for (const step of flow.steps) {
    packJob(step.job, args);
    args.push(step.pending, JSON.stringify(step.children), step.job.flow?.onParentFailure === "run" ? "1" : "");
  }
  const created = Number(await q.script("enqueue-flow", "enqueue a flow", args, q.replicaWait)) === 1;
  if (created) {
    const first = flow.steps.filter((s) => s.pending === 0).map((s) => s.job);
    await announceBatch(q, first, first.map((job) => job.id));
  }
  return { created };
}

/**
 * A flow step's completion with the steps its handler spawned (complete-spawn.lua): one call of its own, outside
 * the completion batches, since the steps are written in the script that completes it.
 */
export async function completeSpawning(q: RedisQueue, { workerId, job, result, spawn, run }: CompleteParams & { spawn: FlowPlanStep[] }): Promise<void> {
  const [field, text] = result === undefined ? ["", ""] : "omitted" in result ? ["result_omitted", result.omitted] : ["result", JSON.stringify(result.value)];
  const args: Array<string | number> = [workerId, q.completedRetentionMs, job.id, field, text];
  const parentStep = job.flow?.step ?? "";
  for (const step of spawn) {
    const direct = step.job.flow?.after[parentStep] === job.id;
    packJob(step.job, args);
    // pending counts the completing step too: it is counted in the same script, right after.
    args.push(step.pending + (direct ? 1 : 0), JSON.stringify(step.children), step.job.flow?.onParentFailure === "run" ? "1" : "", direct ? "1" : "");
  }
  args.push(run ? JSON.stringify(run) : "");
  await q.script("complete-spawn", "complete a flow step", args, q.replicaWait);
  q.held.get(workerId)?.delete(job.id);
}

export async function parentOutcomes(q: RedisQueue, { jobIds }: { jobIds: readonly string[] }): Promise<Map<string, ParentOutcome>> {
  const outcomes = new Map<string, ParentOutcome>();
  if (jobIds.length === 0) return outcomes;
  const rows = await q.guard("read a flow step's parents", async () => {
    const pipeline = q.redis.pipeline();
    for (const id of jobIds) pipeline.hmget(q.keys.job(id), "state", "result", "errors");
    return (await pipeline.exec()) ?? [];
  });
  jobIds.forEach((id, i) => {
    const [error, value] = rows[i] ?? [null, null];
    if (error) throw error;
    const [state, result, errors] = value as [string | null, string | null, string | null];
    if (state === JobState.completed) {
      const stored = result === null ? {} : resultOfHash({ result });
      outcomes.set(id, { state: "completed", result: "result" in stored ? stored.result : undefined });
    } else if (state === JobState.dead) {
      const last = lastError(errors);
      outcomes.set(id, { state: "dead", error: { class: last?.class ?? "Error", message: last?.message ?? "" } });
    }
  });
  return outcomes;
}

const FLOW_FIELDS = ["name", "kind", "tenant", "created_at", "finished_at", "total", "completed", "dead", "cancelled"] as const;

/** Newest first from the flows ZSET (by creation seq): at most LIST_WINDOW flows read per page, filtered here. */
export async function listFlows(q: RedisQueue, params: ListFlowsParams): Promise<{ rows: FlowSummary[]; next: string | null }> {
  return q.guard("list flows", async () => {
    const top = params.after === undefined ? "+inf" : `(${Number(params.after)}`;
    const flat = await q.redis.zrevrangebyscore(q.keys.flows, top, "-inf", "WITHSCORES", "LIMIT", 0, LIST_WINDOW);
    const entries: Array<{ id: string; seq: string }> = [];
    for (let i = 0; i < flat.length; i += 2) entries.push({ id: flat[i]!, seq: flat[i + 1]! });
    const pipeline = q.redis.pipeline();
    for (const { id } of entries) pipeline.hmget(q.keys.flow(id), ...FLOW_FIELDS);
    const replies = entries.length === 0 ? [] : ((await pipeline.exec()) ?? []);
    const matched: Array<{ summary: FlowSummary; seq: string }> = [];
    const gone: string[] = [];
    entries.forEach(({ id, seq }, i) => {
      const [error, value] = replies[i] ?? [null, null];
      if (error) throw error;
      const summary = summaryOf(id, value as Array<string | null>);
      // A cancelled flow's keys expire with its steps' hashes; its entry goes when a listing meets it.
      if (!summary) return void gone.push(id);
      if (params.state !== undefined && summary.state !== params.state) return;
      if (params.name !== undefined && summary.name !== params.name) return;
      if (params.tenantId !== undefined && summary.tenantId !== params.tenantId) return;
      matched.push({ summary, seq });
    });
    if (gone.length > 0) await q.redis.zrem(q.keys.flows, ...gone);
    const page = matched.slice(0, params.limit);
    let next: string | null = null;
    if (matched.length > params.limit) next = page.at(-1)!.seq;
    else if (entries.length >= LIST_WINDOW) next = entries.at(-1)!.seq;
    return { rows: page.map((m) => m.summary), next };
  });
}

const STEP_FIELDS = ["json", "attempts", "errors", "available_at", "state", "done_at", "died_at", "cancelled_at", "result", "result_omitted", "runs"] as const;

/** The flow and every step, read in two round trips (its steps list, then one pipeline of their hashes). */
export async function getFlow(q: RedisQueue, { id }: { id: string }): Promise<FlowDetail | null> {
  return q.guard("read a flow", async () => {
    const [[flowError, fields], [stepsError, ids]] = ((await q.redis
      .pipeline()
      .hmget(q.keys.flow(id), ...FLOW_FIELDS)
      .lrange(q.keys.flowSteps(id), 0, -1)
      .exec()) ?? []) as [[Error | null, unknown], [Error | null, unknown]];
    if (flowError) throw flowError;
    if (stepsError) throw stepsError;
    const summary = summaryOf(id, fields as Array<string | null>);
    if (!summary) return null;
    const jobIds = ids as string[];
    const pipeline = q.redis.pipeline();
    for (const jobId of jobIds) pipeline.hmget(q.keys.job(jobId), ...STEP_FIELDS);
    const replies = jobIds.length === 0 ? [] : ((await pipeline.exec()) ?? []);
    const steps: Record<string, FlowStepInfo> = {};
    jobIds.forEach((jobId, i) => {
      const [error, value] = replies[i] ?? [null, null];
      if (error) throw error;
      const [json, attempts, errors, availableAt, state, doneAt, diedAt, cancelledAt, result, resultOmitted, runs] = value as Fields<11>;
      if (json === null) return;
      const job = decodeJobForDisplay(jobId, [json, attempts, errors, availableAt]);
      if (!job.flow) return;
      const known = (Object.values(JobState) as string[]).includes(state ?? "") ? (state as JobState) : JobState.ready;
      const last = job.errors.at(-1);
      const stored = known === JobState.completed ? resultOfHash(hashOf({ result, result_omitted: resultOmitted })) : {};
      steps[job.flow.step] = {
        jobId,
        task: job.task,
        state: known,
        after: Object.keys(job.flow.after),
        attempts: job.attempts,
        ...("result" in stored ? { result: stored.result } : {}),
        ...(last && known !== JobState.completed ? { error: { class: last.class, message: last.message } } : {}),
        finishedAt: msToIso(known === JobState.completed ? doneAt : known === JobState.dead ? diedAt : known === JobState.cancelled ? cancelledAt : null),
        ...stepTiming(parseRuns(runs).at(-1)),
      };
    });
    return { ...summary, steps };
  });
}

/** A cancelled step's hash is kept as `cancel` keeps a job's (outcomes.ts). */
export async function cancelFlow(q: RedisQueue, { id }: { id: string }): Promise<{ cancelled: string[] } | null> {
  const keep = q.cancelledRetentionMs === 0 ? 0 : Math.max(q.cancelledRetentionMs, 60 * 60 * 1000);
  const cancelled = (await q.script("cancel-flow", "cancel a flow", [id, keep, q.keys.parkedPrefix, q.keys.cancelled])) as string[] | null;
  return cancelled === null ? null : { cancelled };
}

/** An HMGET reply of `N` fields. */
type Fields<N extends number, T extends Array<string | null> = []> = T["length"] extends N ? T : Fields<N, [...T, string | null]>;

function summaryOf(id: string, fields: Array<string | null>): FlowSummary | null {
  const [name, kind, tenant, createdAt, finishedAt, total, completed, dead, cancelled] = fields as Fields<9>;
  if (total === null || total === undefined) return null;
  const counts = { cancelled: cancelled === "1", total: Number(total), completed: Number(completed ?? 0), dead: Number(dead ?? 0) };
  return {
    id,
    name: name ? name : null,
    kind: (kind ?? "flow") as FlowKind,
    state: flowState(counts),
    tenantId: tenant ? tenant : null,
    createdAt: msToIso(createdAt) ?? new Date(0).toISOString(),
    finishedAt: msToIso(finishedAt),
    total: counts.total,
    completed: counts.completed,
    dead: counts.dead,
  };
}

function hashOf(fields: Record<string, string | null>): Record<string, string> {
  const hash: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== null) hash[key] = value;
  return hash;
}

function lastError(errors: string | null): { class: string; message: string } | undefined {
  if (errors === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(errors);
    return Array.isArray(parsed) ? (parsed.at(-1) as { class: string; message: string } | undefined) : undefined;
  } catch {
    return undefined;
  }
}
