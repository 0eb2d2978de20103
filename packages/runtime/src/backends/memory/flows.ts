import { flowState, type FlowPlan, type FlowPlanStep, type ParentOutcome } from "../../core/flow.js";
import type { FlowDetail, FlowStepInfo, FlowSummary, ListFlowsParams } from "../../core/backend/flows.js";
import { JobState } from "../../core/job-state.js";
import { stepTiming } from "../../core/job-life.js";
import { newEntry, type Entry, type MemoryStore } from "./store.js";

/**
 * Flows in the memory queue (docs/flows.md): each step is an entry of the store with its flow bookkeeping beside
 * it (`Entry.flow`), and the flow's counters in `store.flows`. Everything runs in one synchronous turn, so an
 * outcome and its fan-in are one step, as a transaction makes them on PostgreSQL.
 */
export interface MemoryFlow {
  id: string;
  name: string | null;
  kind: FlowPlan["kind"];
  tenantId: string | null;
  createdAt: number;
  finishedAt: number | null;
  seq: number;
  /** Job ids in plan order. */
  steps: string[];
  completed: number;
  dead: number;
  cancelled: boolean;
}

export function enqueueFlow(store: MemoryStore, { flow }: { flow: FlowPlan }): { created: boolean } {
  if (store.flows.has(flow.id)) return { created: false };
  store.flows.set(flow.id, {
    id: flow.id,
    name: flow.name,
    kind: flow.kind,
    tenantId: flow.tenantId,
    createdAt: Date.parse(flow.createdAt),
    finishedAt: null,
    seq: store.seq++,
    steps: flow.steps.map((s) => s.job.id),
    completed: 0,
    dead: 0,
    cancelled: false,
  });
  for (const step of flow.steps) {
    const state = step.pending === 0 ? JobState.ready : JobState.waiting;
    store.entries.set(step.job.id, newEntry(store, step.job, state, { children: step.children, pending: step.pending, counted: false }));
  }
  store.wake();
  return { created: true };
}

/**
 * Steps a completing step spawned (`tools.flow.spawn`): written into its flow, the ones after it alone made ready
 * by its completion right after (they are its children), the others waiting for the spawned steps they follow.
 */
export function addSpawned(store: MemoryStore, parent: Entry, steps: FlowPlanStep[]): void {
  const flow = flowOf(store, parent);
  if (!flow || !parent.flow) return;
  for (const step of steps) {
    if (store.entries.has(step.job.id)) continue;
    // Its parent in the flow counts it at completion (pending + 1), the spawned parents as any parent does.
    const direct = step.job.flow!.after[parent.json.flow!.step] === parent.json.id;
    if (direct) parent.flow.children.push(step.job.id);
    flow.steps.push(step.job.id);
    store.entries.set(step.job.id, newEntry(store, step.job, JobState.waiting, { children: step.children, pending: step.pending + (direct ? 1 : 0), counted: false }));
  }
}

/**
 * A step completed (its entry just became `completed`): counts it for the flow and once for each child; a child
 * with no parent left to wait for becomes ready.
 */
export function stepCompleted(store: MemoryStore, entry: Entry): void {
  const flow = flowOf(store, entry);
  if (!flow || !entry.flow) return;
  flow.completed += 1;
  // Children that run on a parent's failure were counted when it died: they are not counted twice.
  const skipRunChildren = entry.flow.counted;
  entry.flow.counted = true;
  let woke = false;
  for (const childId of entry.flow.children) {
    const child = store.entries.get(childId);
    if (!child?.flow || (skipRunChildren && child.json.flow?.onParentFailure === "run")) continue;
    woke = countParent(child) || woke;
  }
  finish(flow);
  if (woke) store.wake();
}

/** A step died: counted for the flow; children that run on a parent's failure are counted, the others keep waiting. */
export function stepDied(store: MemoryStore, entry: Entry): void {
  const flow = flowOf(store, entry);
  if (!flow || !entry.flow) return;
  flow.dead += 1;
  if (entry.flow.counted) return;
  entry.flow.counted = true;
  let woke = false;
  for (const childId of entry.flow.children) {
    const child = store.entries.get(childId);
    if (child?.flow && child.json.flow?.onParentFailure === "run") woke = countParent(child) || woke;
  }
  if (woke) store.wake();
}

/** A dead step was retried: the flow runs again. */
export function stepRevived(store: MemoryStore, entry: Entry): void {
  const flow = flowOf(store, entry);
  if (flow && flow.dead > 0) flow.dead -= 1;
}

function countParent(child: Entry): boolean {
  child.flow!.pending -= 1;
  if (child.flow!.pending > 0 || child.state !== JobState.waiting) return false;
  child.state = JobState.ready;
  return true;
}

function finish(flow: MemoryFlow): void {
  if (flow.finishedAt === null && flow.completed === flow.steps.length) flow.finishedAt = Date.now();
}

function flowOf(store: MemoryStore, entry: Entry): MemoryFlow | undefined {
  const id = entry.json.flow?.id;
  return id === undefined ? undefined : store.flows.get(id);
}

export function parentOutcomes(store: MemoryStore, { jobIds }: { jobIds: readonly string[] }): Map<string, ParentOutcome> {
  const outcomes = new Map<string, ParentOutcome>();
  for (const id of jobIds) {
    const entry = store.entries.get(id);
    if (entry?.state === JobState.completed) outcomes.set(id, { state: "completed", result: resultValue(entry) });
    else if (entry?.state === JobState.dead) {
      const last = entry.json.errors[entry.json.errors.length - 1];
      outcomes.set(id, { state: "dead", error: { class: last?.class ?? "Error", message: last?.message ?? "" } });
    }
  }
  return outcomes;
}

export function listFlows(store: MemoryStore, params: ListFlowsParams): { rows: FlowSummary[]; next: string | null } {
  const after = params.after === undefined ? Infinity : Number(params.after);
  const flows = [...store.flows.values()].filter((f) => f.seq < after).sort((a, b) => b.seq - a.seq);
  const rows: FlowSummary[] = [];
  let last: MemoryFlow | null = null;
  for (const flow of flows) {
    if (rows.length === params.limit) return { rows, next: String(last!.seq) };
    last = flow;
    const summary = summarize(flow);
    if (params.state !== undefined && summary.state !== params.state) continue;
    if (params.name !== undefined && summary.name !== params.name) continue;
    if (params.tenantId !== undefined && summary.tenantId !== params.tenantId) continue;
    rows.push(summary);
  }
  return { rows, next: null };
}

export function getFlow(store: MemoryStore, { id }: { id: string }): FlowDetail | null {
  const flow = store.flows.get(id);
  if (!flow) return null;
  const steps: Record<string, FlowStepInfo> = {};
  for (const jobId of flow.steps) {
    const entry = store.entries.get(jobId);
    if (!entry?.json.flow) continue;
    const last = entry.json.errors[entry.json.errors.length - 1];
    steps[entry.json.flow.step] = {
      jobId,
      task: entry.json.task,
      state: entry.state,
      after: Object.keys(entry.json.flow.after),
      attempts: entry.json.attempts,
      ...(entry.state === JobState.completed && entry.result !== undefined && "value" in entry.result ? { result: entry.result.value } : {}),
      ...(last && entry.state !== JobState.completed ? { error: { class: last.class, message: last.message } } : {}),
      finishedAt: entry.finishedAt === null ? (entry.diedAt === null ? null : new Date(entry.diedAt).toISOString()) : new Date(entry.finishedAt).toISOString(),
      ...stepTiming(entry.runs?.at(-1)),
    };
  }
  return { ...summarize(flow), steps };
}

export function cancelFlow(store: MemoryStore, { id }: { id: string }): { cancelled: string[] } | null {
  const flow = store.flows.get(id);
  if (!flow) return null;
  const cancelled: string[] = [];
  const now = Date.now();
  for (const jobId of flow.steps) {
    const entry = store.entries.get(jobId);
    if (!entry || (entry.state !== JobState.waiting && entry.state !== JobState.ready && entry.state !== JobState.running)) continue;
    // A running step keeps lockedBy, so its worker's next heartbeat learns of the cancellation.
    if (entry.state !== JobState.running) entry.lockedBy = null;
    entry.state = JobState.cancelled;
    entry.finishedAt = now;
    entry.lockedUntil = null;
    cancelled.push(jobId);
  }
  flow.cancelled = true;
  flow.finishedAt ??= now;
  return { cancelled };
}

function summarize(flow: MemoryFlow): FlowSummary {
  return {
    id: flow.id,
    name: flow.name,
    kind: flow.kind,
    state: flowState({ cancelled: flow.cancelled, total: flow.steps.length, completed: flow.completed, dead: flow.dead }),
    tenantId: flow.tenantId,
    createdAt: new Date(flow.createdAt).toISOString(),
    finishedAt: flow.finishedAt === null ? null : new Date(flow.finishedAt).toISOString(),
    total: flow.steps.length,
    completed: flow.completed,
    dead: flow.dead,
  };
}

function resultValue(entry: Entry): unknown {
  return entry.result !== undefined && "value" in entry.result ? entry.result.value : undefined;
}
