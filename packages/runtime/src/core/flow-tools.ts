import { planSpawn, type FlowPlanStep, type FlowStepInput, type JobFlow, type ParentOutcome, type SpawnOptions } from "./flow.js";
import type { Job } from "./job.js";

/** `tools.flow` in a flow step's handler (docs/flows.md#results-passed-on); undefined outside a flow. */
export interface FlowTools<R extends Record<string, unknown> = Record<string, unknown>> {
  /** The flow's id. */
  readonly id: string;
  /** This step's name. */
  readonly step: string;
  /**
   * What each step this one runs after returned, by step name; for a step declared `onParentFailure: "run"`, a
   * parent that ended dead reads `{ error: { class, message } }` instead.
   */
  readonly results: R;
  /**
   * Adds steps to this flow that run after this one (one per line of a file, say), written with this step's
   * completion: a failed attempt adds nothing, and a retried step adds them once (docs/flows.md#adding-steps-while-it-runs).
   * Each is named `<this step>/<name>`; `then` steps run once all of them have completed.
   */
  spawn(steps: Readonly<Record<string, FlowStepInput>>, options?: SpawnOptions): void;
}

/** `tools.batch` in a batch's `onComplete` / `onSuccess` handler (docs/flows.md#batches). */
export interface BatchTools {
  readonly id: string;
  /** The batch's jobs. */
  readonly total: number;
  readonly completed: number;
  readonly dead: number;
}

/** What a flow step's attempt reads before its handler runs, kept for its tools. */
interface StepInputs {
  flow: FlowTools;
  batch: BatchTools | undefined;
  /** What this attempt's handler spawned, written with its completion (`spawnedBy`). */
  spawned: FlowPlanStep[];
}

const inputs = new WeakMap<Job, StepInputs>();

/** The step inputs loaded for this attempt of `job`, if it is a flow step. */
export function stepInputsOf(job: Job): StepInputs | undefined {
  return inputs.get(job);
}

/**
 * Reads the outcomes of the steps `job` runs after (one round trip, by job id) and keeps them for its tools.
 * A parent neither completed nor dead (possible only for a step whose parents were retried meanwhile) reads as
 * undefined.
 */
export async function loadStepInputs(job: Job, read: (jobIds: readonly string[]) => Promise<Map<string, ParentOutcome>>): Promise<void> {
  const flow = job.flow as JobFlow;
  const parents = Object.entries(flow.after);
  const outcomes = parents.length === 0 ? new Map<string, ParentOutcome>() : await read(parents.map(([, id]) => id));
  const results: Record<string, unknown> = {};
  let completed = 0;
  let dead = 0;
  for (const [name, id] of parents) {
    const outcome = outcomes.get(id);
    if (outcome?.state === "completed") {
      completed += 1;
      results[name] = outcome.result;
    } else if (outcome?.state === "dead") {
      dead += 1;
      results[name] = { error: outcome.error };
    } else results[name] = undefined;
  }
  const spawned: FlowPlanStep[] = [];
  inputs.set(job, {
    flow: {
      id: flow.id,
      step: flow.step,
      results,
      spawn(steps, options) {
        const planned = planSpawn({ job, flow }, steps, options);
        const taken = new Set(spawned.map((s) => s.name));
        const again = planned.find((s) => taken.has(s.name));
        if (again) throw new TypeError(`flow.spawn: step "${again.name}" was already spawned by this attempt; give each spawned step its own name`);
        spawned.push(...planned);
      },
    },
    batch: flow.batch ? { id: flow.id, total: parents.length, completed, dead } : undefined,
    spawned,
  });
}

/** The steps this attempt of `job` spawned (none for a job outside a flow), for its completion to write. */
export function spawnedBy(job: Job): FlowPlanStep[] | undefined {
  const spawned = inputs.get(job)?.spawned;
  return spawned && spawned.length > 0 ? spawned : undefined;
}
