import { TRPCError } from "@trpc/server";
import { notSupported } from "../../core/backend/capabilities.js";
import type { FlowDetail } from "../../core/backend/flows.js";
import { JobState } from "../../core/job-state.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { backendCall, requireQueue } from "../queue-access.js";

const FLOWS_HINT = "enable the database plugin for a RabbitMQ queue, or run flows on a PostgreSQL, PGlite or Redis queue (jfast docs flows#backends)";

/** A flow with the named queue that holds it (every step of a flow runs on one named queue). */
export interface FoundFlow {
  queue: string;
  flow: FlowDetail;
}

/** The service's named queues, `default` first; the provider itself on a service with one queue. */
export function namedQueues(queue: QueueProvider): { name: string; backend: QueueProvider["backend"] }[] {
  if (queue.queues.size === 1) return [{ name: [...queue.queues.keys()][0]!, backend: queue.backend }];
  return [...queue.queues.values()].map((q) => ({ name: q.name, backend: q.backend }));
}

/**
 * The refusal when no queue of the service keeps flows (`capabilities.flows` off: RabbitMQ without the database
 * plugin), read from the capability before any backend is asked; null when one does (the views skip the others).
 */
export function flowsRefusal(queue: QueueProvider): Error | null {
  const queues = namedQueues(queue);
  if (queues.some((q) => q.backend.capabilities.flows)) return null;
  const kind = queues[0]!.backend.kind;
  const why = kind === "rabbitmq" ? " without the database plugin: the broker cannot hold a step back until its parents finish" : "";
  return notSupported("flows", `a ${kind} queue keeps no flows${why}`, { hint: FLOWS_HINT });
}

/** A flow by id in whichever named queue holds it (one lookup per queue with flows), or null. */
export async function findFlow(queue: QueueProvider, id: string): Promise<FoundFlow | null> {
  for (const named of namedQueues(queue)) {
    if (!named.backend.capabilities.flows) continue;
    const flow = await backendCall(queue, "reading the flow", () => named.backend.getFlow({ id }));
    if (flow) return { queue: named.name, flow };
  }
  return null;
}

/**
 * Cancels every step of a flow not yet finished (docs/admin-api.md#operating-flows): the admin API's flows.cancel
 * and `jfast flows cancel`, one audit entry (`flows.cancel`) naming the steps cancelled. Null: no such flow.
 */
export async function cancelFlow(ctx: OperatorContext, id: string): Promise<{ cancelled: string[]; queue: string } | null> {
  const queue = requireFlows(ctx);
  return auditedCall(
    ctx,
    { action: "flows.cancel", ids: [], filter: { flow: id } },
    async () => {
      const found = await findFlow(queue, id);
      if (!found) return null;
      const backend = namedQueues(queue).find((q) => q.name === found.queue)!.backend;
      const result = await backendCall(queue, "cancelling the flow", () => backend.cancelFlow({ id }));
      return result && { cancelled: result.cancelled, queue: found.queue };
    },
    (r) => (r === null ? { found: false } : { cancelled: r.cancelled.length, queue: r.queue }),
    (r) => r?.cancelled ?? [],
  );
}

/**
 * Retries a dead step: the dead-letter retry of its job, which resumes the flow where it stopped (docs/flows.md).
 * The admin API's flows.retryStep and the dashboard's Retry, one audit entry (`flows.retryStep`). A step that is
 * not dead is refused (PRECONDITION_FAILED) and changes nothing; an unknown flow or step is NOT_FOUND.
 */
export async function retryFlowStep(ctx: OperatorContext, params: { id: string; step: string }): Promise<{ jobId: string; queue: string }> {
  const queue = requireFlows(ctx);
  const found = await findFlow(queue, params.id);
  if (!found) throw new TRPCError({ code: "NOT_FOUND", message: `no flow with id ${params.id}` });
  const step = Object.hasOwn(found.flow.steps, params.step) ? found.flow.steps[params.step] : undefined;
  if (!step) {
    throw new TRPCError({ code: "NOT_FOUND", message: `flow ${params.id} has no step "${params.step}"; its steps are ${Object.keys(found.flow.steps).join(", ")}` });
  }
  if (step.state !== JobState.dead) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `step "${params.step}" of flow ${params.id} is ${step.state}, not dead: only a dead step is retried (a waiting one runs when the steps it is after complete)`,
    });
  }
  const backend = namedQueues(queue).find((q) => q.name === found.queue)!.backend;
  return auditedCall(
    ctx,
    { action: "flows.retryStep", ids: [step.jobId], filter: { flow: params.id, step: params.step } },
    async () => {
      const { retried } = await backendCall(queue, "retrying the step", () => backend.retryDead({ ids: [step.jobId] }));
      // Dead a moment ago, gone now: another operator retried it in between.
      if (retried.length === 0) throw new TRPCError({ code: "CONFLICT", message: `step "${params.step}" of flow ${params.id} is no longer dead (retried meanwhile?)` });
      return { jobId: step.jobId, queue: found.queue };
    },
    (r) => ({ retried: 1, queue: r.queue }),
  );
}

/** The queue, when a named queue keeps flows; else METHOD_NOT_SUPPORTED carrying the NotSupportedError. */
export function requireFlows(ctx: Pick<OperatorContext, "sources">): QueueProvider {
  const queue = requireQueue(ctx.sources);
  const refusal = flowsRefusal(queue);
  if (refusal) throw new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: refusal.message.split("\n")[0]!, cause: refusal });
  return queue;
}
