import { planBatch, planFlow, type BatchCreated, type BatchOptions, type FlowCreated, type FlowInput, type FlowPlan } from "../core/flow.js";
import type { Job } from "../core/job.js";
import { FLOW_STORE_MISSING } from "../core/flow-store.js";
import { BackendKind, notSupported } from "../core/queue-backend.js";
import { JfastError } from "../errors/jfast-error.js";
import type { NamedQueue } from "./queue-provider.js";

/**
 * Plans a flow for the service's queues (docs/flows.md): every step's job prepared as `enqueue` prepares one (its
 * task known, max attempts and priority filled in), then checked as a graph. All steps of a flow go to one named
 * queue, whose backend keeps the fan-in beside the jobs; one that cannot (`capabilities.flows` off) refuses here.
 */
export function planForQueue(
  plan: () => FlowPlan,
  prepare: (job: Job) => Job,
  queueOf: (task: string) => NamedQueue,
): { plan: FlowPlan; queue: NamedQueue } {
  const planned = plan();
  for (const step of planned.steps) prepare(step.job);
  const unique = planned.steps.find((s) => s.job.unique !== null);
  if (unique) {
    throw new JfastError(`flow: step "${unique.name}" is a job of "${unique.job.task}", a task whose jobs are unique`, {
      code: "FLOW_INVALID",
      hint: "a flow's steps are made once by the flow itself: use a task without the unique option for a step",
      docs: "jfast docs flows#writing-a-flow",
    });
  }
  const keyed = planned.steps.find((s) => s.job.limitKey !== null);
  if (keyed) {
    throw new JfastError(`flow: step "${keyed.name}" is a job of "${keyed.job.task}", a task with per-key concurrency`, {
      code: "FLOW_INVALID",
      hint: "a flow's steps are not limited per key: use a task with a plain concurrency number (or none) for a step",
      docs: "jfast docs flow-control#per-key-concurrency",
    });
  }
  const queue = queueOf(planned.steps[0]!.job.task);
  const other = planned.steps.find((s) => queueOf(s.job.task) !== queue);
  if (other) {
    throw new JfastError(
      `flow: step "${other.name}" (${other.job.task}) goes to queue "${queueOf(other.job.task).name}", step "${planned.steps[0]!.name}" to "${queue.name}"`,
      {
        code: "FLOW_INVALID",
        hint: "every step of one flow runs on one named queue: move the tasks to one queue, or start a second flow from a step",
        docs: "jfast docs flows#queues",
      },
    );
  }
  if (!queue.backend.capabilities.flows) {
    // RabbitMQ keeps flows in the service's database: the fix is the database plugin, not another queue.
    const rabbitmq = queue.backend.kind === BackendKind.rabbitmq;
    throw notSupported("flows", `the ${queue.backend.kind} queue "${queue.name}" keeps no flows${rabbitmq ? `: ${FLOW_STORE_MISSING.reason}` : ""}`, {
      hint: rabbitmq ? FLOW_STORE_MISSING.hint : "use a PostgreSQL, Redis or memory queue for flows and batches (docs/flows.md#backends lists what each can do)",
    });
  }
  return { plan: planned, queue };
}

export function flowCreated(plan: FlowPlan): FlowCreated {
  return { flowId: plan.id, jobIds: Object.fromEntries(plan.steps.map((s) => [s.name, s.job.id])) };
}

export function batchCreated(plan: FlowPlan, jobs: readonly Job[]): BatchCreated {
  const byName = new Map(plan.steps.map((s) => [s.name, s.job.id]));
  return {
    batchId: plan.id,
    jobIds: jobs.map((job) => job.id),
    onCompleteId: byName.get("onComplete") ?? null,
    onSuccessId: byName.get("onSuccess") ?? null,
  };
}

export { planBatch, planFlow, type BatchOptions, type FlowInput };
