import { JfastError } from "../errors/jfast-error.js";
import { Job, type JobJSON } from "./job.js";
import { newJobId } from "./job-id.js";

/**
 * Flows (docs/flows.md): jobs that run after other jobs, as a graph of named steps. A flow is planned here, once,
 * from what the caller wrote (checked: no cycle, no unknown step, not empty); a backend stores the plan and from
 * then on only counts: a step whose parents all finished becomes ready, atomically with the last parent's outcome.
 */

/** A job's place in its flow, stored with the job (`JobJSON.flow`). */
export interface JobFlow {
  /** The flow's id. */
  id: string;
  /** This step's name, unique in its flow. */
  step: string;
  /** The steps this one runs after: name → job id. Empty for a step that starts at once. */
  after: Record<string, string>;
  /** "run": the step runs even when a step it is after ended dead, and reads `{ error }` in its place. */
  onParentFailure?: "run";
  /** Set on a batch's callbacks (`onComplete`, `onSuccess`): their handler reads `tools.batch`. */
  batch?: true;
}

/** One step as the caller writes it: a job, or a job with the steps it runs after. */
export type FlowStepInput =
  | Job
  | {
      job: Job;
      /** Names of steps of the same flow that must complete first. */
      after?: readonly string[];
      /** What a dead step it is after does to it: "stop" (default: it waits, the flow fails) or "run". */
      onParentFailure?: "stop" | "run";
    };

/** What `queue.flow` and `outbox.flow` take. */
export interface FlowInput {
  /** For people: shown in the dashboard, `jfast flows list` and `flows.list`. */
  name?: string;
  steps: Readonly<Record<string, FlowStepInput>>;
}

/** What `queue.batch` and `outbox.batch` take besides the jobs. */
export interface BatchOptions {
  /** Runs once every job has finished, completed or dead. */
  onComplete?: Job;
  /** Runs once every job has completed (later, when a dead one is retried and completes). */
  onSuccess?: Job;
  /** For people, as a flow's name. */
  name?: string;
}

/** What `queue.flow` / `outbox.flow` return. */
export interface FlowCreated {
  flowId: string;
  /** Each step's job id, by step name. */
  jobIds: Record<string, string>;
}

/** What `queue.batch` / `outbox.batch` return: the batch is a flow (`flowId`), its jobs' ids in the given order. */
export interface BatchCreated {
  batchId: string;
  jobIds: string[];
  onCompleteId: string | null;
  onSuccessId: string | null;
}

/** A flow checked and ready to store: what a backend's `enqueueFlow` writes, all of it or none. */
export interface FlowPlan {
  id: string;
  name: string | null;
  kind: FlowKind;
  tenantId: string | null;
  createdAt: string;
  /** Parents before children; every job has its `flow` set. */
  steps: FlowPlanStep[];
}

export type FlowKind = "flow" | "batch";

/** A plan on the wire (an outbox row of kind "flow"): the steps' jobs in their stored form. */
export interface FlowPlanJSON extends Omit<FlowPlan, "steps"> {
  steps: (Omit<FlowPlanStep, "job"> & { job: JobJSON })[];
}

/** `stored` gives a job's stored form (sealed for an encrypted task: encryption/job-encryption.ts). */
export function flowPlanToJSON(plan: FlowPlan, stored: (job: Job) => JobJSON = (job) => job.toJSON()): FlowPlanJSON {
  return { ...plan, steps: plan.steps.map((step) => ({ ...step, job: stored(step.job) })) };
}

export function flowPlanFromJSON(json: FlowPlanJSON): FlowPlan {
  return { ...json, steps: json.steps.map((step) => ({ ...step, job: Job.fromJSON(step.job) })) };
}

export interface FlowPlanStep {
  name: string;
  job: Job;
  /** The job ids of the steps that run after this one. */
  children: string[];
  /** How many parents must finish before it becomes ready; 0: ready as it is written. */
  pending: number;
}

/** A flow's state: derived from its steps' (docs/flows.md#states). */
export const FlowState = {
  running: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
} as const;
export type FlowState = (typeof FlowState)[keyof typeof FlowState];

/** A flow's state from its counts: cancelled, else failed while a step is dead, else completed when all are. */
export function flowState(counts: { cancelled: boolean; total: number; completed: number; dead: number }): FlowState {
  if (counts.cancelled) return FlowState.cancelled;
  if (counts.dead > 0) return FlowState.failed;
  return counts.completed >= counts.total ? FlowState.completed : FlowState.running;
}

/**
 * What a step reads of a step it is after (`tools.flow.results`): the result it returned, or, for a step declared
 * with `onParentFailure: "run"`, `{ error }` of a parent that ended dead.
 */
export type ParentOutcome = { state: "completed"; result: unknown } | { state: "dead"; error: { class: string; message: string } };

const STEP_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,99}$/;
/** A spawned step's name: `<spawning step>/<name>`, nested as steps spawn steps. */
const SPAWNED_STEP_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,999}$/;
const FLOW_NAME_MAX = 200;

function invalid(message: string, hint: string): JfastError {
  return new JfastError(message, { code: "FLOW_INVALID", hint, docs: "jfast docs flows#writing-a-flow" });
}

/**
 * Checks `input` and plans it: every step's job gets its place in the flow, the steps come parents first, and each
 * knows its children and how many parents it waits for. Throws FLOW_INVALID (nothing written) for an empty flow, a
 * step name that is not a name, an unknown or repeated step in `after`, a job used twice, or a cycle.
 */
export function planFlow(input: FlowInput, options: { kind?: FlowKind; batchSteps?: readonly string[]; spawned?: boolean } = {}): FlowPlan {
  const where = options.kind === "batch" ? "batch" : "flow";
  if (input === null || typeof input !== "object" || input.steps === null || typeof input.steps !== "object") {
    throw invalid(`${where}: expected { steps: { <name>: job | { job, after } } }, got ${describe(input)}`, "pass the steps as an object keyed by step name");
  }
  if (input.name !== undefined && (typeof input.name !== "string" || input.name.length === 0 || input.name.length > FLOW_NAME_MAX)) {
    throw invalid(`${where}: name must be a non-empty string of at most ${FLOW_NAME_MAX} characters`, "leave name out, or give a short name for people, e.g. \"order.fulfil\"");
  }
  const names = Object.keys(input.steps);
  if (names.length === 0) throw invalid(`${where}: it has no steps`, "give at least one step; a single job is better enqueued with queue.enqueue");
  const seenJobs = new Set<Job>();
  const steps = new Map<string, { job: Job; after: string[]; run: boolean }>();
  for (const name of names) {
    if (!(options.spawned ? SPAWNED_STEP_NAME : STEP_NAME).test(name)) {
      throw invalid(`${where}: step name ${JSON.stringify(name)} is not a name`, "use letters, digits, \"_\", \".\", \":\" or \"-\" (up to 100), starting with a letter, digit or \"_\"");
    }
    const raw = input.steps[name];
    const spec = raw instanceof Job ? { job: raw } : raw;
    if (!spec || typeof spec !== "object" || !(spec.job instanceof Job)) {
      throw invalid(`${where}: step "${name}" is not a job`, `make it with the task's job(): { ${name}: myTask.job(payload) } or { ${name}: { job: myTask.job(payload), after: [...] } }`);
    }
    if (spec.job.unique) {
      throw invalid(`${where}: step "${name}" is a unique job`, "a flow's steps are made once by the flow itself: leave unique out of their jobs and tasks");
    }
    if (seenJobs.has(spec.job)) throw invalid(`${where}: step "${name}" uses a job object another step uses too`, "make one job per step: call task.job(...) for each");
    seenJobs.add(spec.job);
    const after = spec.after ?? [];
    if (!Array.isArray(after)) throw invalid(`${where}: step "${name}": after must be an array of step names`, `e.g. { job, after: ["charge"] }`);
    if (spec.onParentFailure !== undefined && spec.onParentFailure !== "stop" && spec.onParentFailure !== "run") {
      throw invalid(`${where}: step "${name}": onParentFailure must be "stop" or "run", got ${describe(spec.onParentFailure)}`, "leave it out to stop, the default");
    }
    steps.set(name, { job: spec.job, after: [...after], run: spec.onParentFailure === "run" });
  }
  for (const [name, step] of steps) {
    const seen = new Set<string>();
    for (const parent of step.after) {
      if (typeof parent !== "string" || !steps.has(parent)) {
        throw invalid(`${where}: step "${name}" runs after ${JSON.stringify(parent)}, which is not a step of this ${where}`, `the steps are: ${[...steps.keys()].join(", ")}`);
      }
      if (parent === name) throw invalid(`${where}: step "${name}" runs after itself`, "remove it from its own after");
      if (seen.has(parent)) throw invalid(`${where}: step "${name}" names "${parent}" twice in after`, "name each step once");
      seen.add(parent);
    }
  }
  const order = topologicalOrder(steps, where);
  const flowId = newJobId();
  const first = steps.get(order[0]!)!.job;
  const children = new Map<string, string[]>();
  for (const name of order) children.set(name, []);
  for (const name of order) for (const parent of steps.get(name)!.after) children.get(parent)!.push(steps.get(name)!.job.id);
  const batchSteps = new Set(options.batchSteps ?? []);
  return {
    id: flowId,
    name: input.name ?? null,
    kind: options.kind ?? "flow",
    tenantId: first.tenantId,
    createdAt: new Date().toISOString(),
    steps: order.map((name) => {
      const step = steps.get(name)!;
      step.job.flow = {
        id: flowId,
        step: name,
        after: Object.fromEntries(step.after.map((parent) => [parent, steps.get(parent)!.job.id])),
        ...(step.run ? { onParentFailure: "run" as const } : {}),
        ...(batchSteps.has(name) ? { batch: true as const } : {}),
      };
      return { name, job: step.job, children: children.get(name)!, pending: step.after.length };
    }),
  };
}

/** A batch as a flow: its jobs as steps "0", "1", …; `onComplete` after all of them (run on failure), `onSuccess` after all. */
export function planBatch(jobs: readonly Job[], options: BatchOptions = {}): FlowPlan {
  if (!Array.isArray(jobs) || jobs.length === 0) {
    throw invalid("batch: it has no jobs", "pass an array of at least one job: queue.batch([task.job(a), task.job(b)], { onComplete })");
  }
  const steps: Record<string, FlowStepInput> = {};
  const names = jobs.map((job, i) => {
    steps[String(i)] = job;
    return String(i);
  });
  const callbacks: string[] = [];
  if (options.onComplete !== undefined) {
    steps.onComplete = { job: options.onComplete, after: names, onParentFailure: "run" };
    callbacks.push("onComplete");
  }
  if (options.onSuccess !== undefined) {
    steps.onSuccess = { job: options.onSuccess, after: names };
    callbacks.push("onSuccess");
  }
  return planFlow({ ...(options.name === undefined ? {} : { name: options.name }), steps }, { kind: "batch", batchSteps: callbacks });
}

/** What `tools.flow.spawn` takes besides the steps: steps that run once every spawned step has completed. */
export interface SpawnOptions {
  then?: Readonly<Record<string, FlowStepInput>>;
}

/**
 * Steps a running step adds to its flow (`tools.flow.spawn`), planned to be written with that step's completion
 * (docs/flows.md#adding-steps-while-it-runs). Each is named `<spawning step>/<name>` (so it cannot collide with a
 * step of the flow) and runs after the spawning step, plus any spawned step named in its own `after`; a `then`
 * step runs after every spawned step, plus any `then` step in its `after`. `pending` counts only the spawned
 * parents: the spawning step is completing in the same write.
 */
export function planSpawn(parent: { job: { id: string; tenantId: string | null }; flow: JobFlow }, steps: Readonly<Record<string, FlowStepInput>>, options: SpawnOptions = {}): FlowPlanStep[] {
  const prefix = `${parent.flow.step}/`;
  const spawnedNames = Object.keys(steps ?? {});
  if (spawnedNames.length === 0) throw invalid("flow.spawn: it has no steps", "give at least one step: tools.flow.spawn({ line1: task.job(...) })");
  const thenSteps = options.then ?? {};
  const input: Record<string, FlowStepInput> = {};
  const withPrefix = (name: string) => `${prefix}${name}`;
  const local = (raw: FlowStepInput | undefined, extraAfter: string[], own: Set<string>, label: string): FlowStepInput => {
    const spec = raw instanceof Job ? { job: raw } : raw;
    if (!spec || typeof spec !== "object" || !(spec.job instanceof Job)) {
      throw invalid(`flow.spawn: step "${label}" is not a job`, `make it with the task's job(): { ${label}: myTask.job(payload) }`);
    }
    const after = (spec.after ?? []).map((name) => {
      if (!own.has(name)) throw invalid(`flow.spawn: step "${label}" runs after "${name}", which is not a step of this spawn`, `name steps of the same spawn (${[...own].join(", ")})`);
      return withPrefix(name);
    });
    return { job: spec.job, after: [...extraAfter, ...after], ...(spec.onParentFailure ? { onParentFailure: spec.onParentFailure } : {}) };
  };
  const spawnedSet = new Set(spawnedNames);
  for (const name of spawnedNames) input[withPrefix(name)] = local(steps[name], [], spawnedSet, name);
  const thenNames = Object.keys(thenSteps);
  const thenSet = new Set(thenNames);
  for (const name of thenNames) {
    if (spawnedSet.has(name)) throw invalid(`flow.spawn: "${name}" is both a spawned step and a then step`, "give each step one name");
    input[withPrefix(name)] = local(thenSteps[name], spawnedNames.map(withPrefix), thenSet, name);
  }
  // Planned as a flow of its own (cycles, names, jobs used twice), then moved into the parent's flow.
  const plan = planFlow({ steps: input }, { spawned: true });
  const ids = new Map(plan.steps.map((step) => [step.name, step.job.id]));
  return plan.steps.map((step) => {
    const flow = step.job.flow!;
    step.job.flow = {
      id: parent.flow.id,
      step: step.name,
      after: { [parent.flow.step]: parent.job.id, ...Object.fromEntries(Object.keys(flow.after).map((name) => [name, ids.get(name)!])) },
      ...(flow.onParentFailure ? { onParentFailure: flow.onParentFailure } : {}),
    };
    return step;
  });
}

function topologicalOrder(steps: Map<string, { after: string[] }>, where: string): string[] {
  const state = new Map<string, 1 | 2>();
  const order: string[] = [];
  // Iterative depth-first search: a chain of 10 000 steps must not overflow the stack.
  for (const root of steps.keys()) {
    if (state.has(root)) continue;
    const stack: { name: string; next: number }[] = [{ name: root, next: 0 }];
    state.set(root, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const after = steps.get(top.name)!.after;
      if (top.next < after.length) {
        const parent = after[top.next++]!;
        const seen = state.get(parent);
        if (seen === 1) {
          const cycle = [...stack.slice(stack.findIndex((s) => s.name === parent)).map((s) => s.name), parent];
          throw invalid(`${where}: the steps form a cycle: ${cycle.reverse().join(" → ")}`, "a step cannot wait, directly or not, for itself: remove one of these after links");
        }
        if (seen === undefined) {
          state.set(parent, 1);
          stack.push({ name: parent, next: 0 });
        }
      } else {
        state.set(top.name, 2);
        order.push(top.name);
        stack.pop();
      }
    }
  }
  return order;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}
