import { JfastError } from "../errors/jfast-error.js";
import { currentDeclarationScope } from "./declarations.js";
import { planFlow, type FlowInput, type FlowStepInput } from "./flow.js";
import type { Job, JobOptions } from "./job.js";
import type { TaskTools } from "./task.js";

/**
 * A typed flow (docs/flows.md#typed-flows): its steps declared once by task, so that `after` names only steps of
 * the flow, `create` takes each step's payload as its task takes it, and a step's handler reads the results of
 * the steps it runs after with their tasks' result types:
 *
 *   export const fulfil = defineFlow("order.fulfil", {
 *     charge: { task: chargeCard },
 *     reserve: { task: reserveStock },
 *     ship: { task: createShipment, after: ["charge", "reserve"] },
 *   });
 *   await outbox.flow(tx, fulfil.create({ charge: { order_id }, reserve: { order_id }, ship: { order_id } }));
 *   // in createShipment's handler:
 *   const { charge, reserve } = fulfil.results(tools, "ship");
 */
/** A task as a flow step takes it: any payload, any result (read back by StepPayload and StepResult). */
export interface FlowTask {
  readonly name: string;
  job(payload: never, options?: JobOptions): Job;
  handler(payload: never, tools: never): unknown;
}

export interface FlowStepDeclaration<Name extends string = string> {
  readonly task: FlowTask;
  readonly after?: readonly Name[];
  readonly onParentFailure?: "stop" | "run";
}

export type FlowSteps<S> = { readonly [K in keyof S]: FlowStepDeclaration<Extract<keyof S, string>> };

/** The payload a step's task takes. */
export type StepPayload<T> = T extends { job(payload: infer P, options?: JobOptions): unknown } ? P : never;

/** What a step's task returns, awaited. */
export type StepResult<T> = T extends { handler(payload: never, tools: never): infer R } ? Awaited<R> : unknown;

/** A parent that ended dead, as a step declared `onParentFailure: "run"` reads it. */
export interface FailedParent {
  error: { class: string; message: string };
}

/** What step `K` reads in `tools.flow.results`: each step it runs after, by name, with that step's result type. */
export type StepResults<S extends FlowSteps<S>, K extends keyof S> = {
  [P in StepParents<S[K]> & keyof S]: S[K] extends { onParentFailure: "run" } ? StepResult<S[P]["task"]> | FailedParent : StepResult<S[P]["task"]>;
};

type StepParents<D> = D extends { after: readonly (infer N)[] } ? N : never;

export interface FlowDefinition<S extends FlowSteps<S>> {
  readonly name: string;
  readonly steps: S;
  /**
   * The flow to start, every step's job made by its task with its payload; `options` per step (delay, priority,
   * tenant) as `task.job(payload, options)` takes them.
   */
  create(payloads: { readonly [K in keyof S]: StepPayload<S[K]["task"]> }, options?: { readonly [K in keyof S]?: JobOptions }): FlowInput;
  /**
   * In the handler of step `step`: the results of the steps it runs after, typed. Throws FLOW_INVALID when the
   * job running is not that step of this flow (a wrong step name does not compile).
   */
  results<K extends keyof S & string>(tools: Pick<TaskTools, "flow" | "job">, step: K): StepResults<S, K>;
}

export function defineFlow<const S extends FlowSteps<S>>(name: string, steps: S): FlowDefinition<S> {
  if (typeof name !== "string" || name.length === 0) throw new TypeError('defineFlow(name, steps) needs a name for people, e.g. "order.fulfil"');
  const names = Object.keys(steps) as (keyof S & string)[];
  // Checked now, with placeholder jobs, so that a cycle or an unknown step fails at declaration, not at the first start.
  planFlow({
    name,
    steps: Object.fromEntries(
      names.map((step) => {
        const declared = steps[step];
        if (!declared || typeof declared.task?.job !== "function") {
          throw new TypeError(`defineFlow("${name}"): step "${step}" needs { task } with a task made by task(...)`);
        }
        return [step, placeholder(declared)];
      }),
    ),
  });
  const definition: FlowDefinition<S> = {
    name,
    steps,
    create(payloads, options) {
      const input: Record<string, FlowStepInput> = {};
      for (const step of names) {
        const declared = steps[step];
        const job = makeJob(declared)(payloads[step], options?.[step]);
        input[step] = {
          job,
          ...(declared.after ? { after: declared.after } : {}),
          ...(declared.onParentFailure ? { onParentFailure: declared.onParentFailure } : {}),
        };
      }
      return { name, steps: input };
    },
    results(tools, step) {
      const flow = tools.flow;
      if (!flow || flow.step !== step) {
        throw new JfastError(
          flow
            ? `flow "${name}": this handler runs step "${flow.step}", not "${step}"`
            : `flow "${name}": job ${tools.job.id} (${tools.job.task}) is not a step of a flow`,
          {
            code: "FLOW_INVALID",
            hint: "read the results of the step this handler runs; a task used in several steps reads tools.flow.step first",
            docs: "jfast docs flows#typed-flows",
          },
        );
      }
      return flow.results as StepResults<S, typeof step>;
    },
  };
  recordFlow({ name, tasks: names.map((step) => steps[step].task.name) });
  defined.add(definition);
  return definition;
}

/** A flow as start-up checks it: a queue that keeps no flows refuses to start with one (plugins/queue.ts). */
export interface DeclaredFlow {
  readonly name: string;
  /** Its steps' tasks. */
  readonly tasks: readonly string[];
}

/** What a discovered tasks file declared with defineFlow while it was imported, plus the flows it exports. */
export function flowsOf(module: { file: string; exports: Record<string, unknown> }): DeclaredFlow[] {
  const recorded = store.get(module.file) ?? [];
  const exported = Object.values(module.exports)
    .filter((value): value is { name: string; steps: Record<string, FlowStepDeclaration> } => typeof value === "object" && value !== null && defined.has(value))
    .filter((flow) => !recorded.some((r) => r.name === flow.name))
    .map((flow) => ({ name: flow.name, tasks: Object.values(flow.steps).map((step) => step.task.name) }));
  return [...recorded, ...exported];
}

function recordFlow(flow: DeclaredFlow): void {
  const scope = currentDeclarationScope();
  if (scope) store.set(scope.file, [...(store.get(scope.file) ?? []), flow]);
}

// Kept on globalThis like task declarations: ES modules run once per process, and a second app built in the
// same process (tests, the CLI) must find what the first import declared.
const KEY = Symbol.for("jfast.flow-declarations");
const store: Map<string, DeclaredFlow[]> = ((globalThis as Record<symbol, unknown>)[KEY] as Map<string, DeclaredFlow[]> | undefined) ?? new Map();
(globalThis as Record<symbol, unknown>)[KEY] = store;
const defined = new WeakSet<object>();

/** The step's `task.job`, taking the payload `create` was given for it (typed by StepPayload at the call). */
function makeJob(declared: FlowStepDeclaration): (payload: unknown, options?: JobOptions) => Job {
  return declared.task.job.bind(declared.task) as unknown as (payload: unknown, options?: JobOptions) => Job;
}

/** A job standing for a declared step while its graph is checked. */
function placeholder(declared: FlowStepDeclaration): FlowStepInput {
  const job = makeJob(declared)({});
  return { job, ...(declared.after ? { after: declared.after } : {}) };
}
