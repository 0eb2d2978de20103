import type { QueueProvider } from "../../queue/queue-provider.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { backendCall } from "../queue-access.js";

/** The dead letters named, or every one (`all`, the CLI's `--all`), of a named queue (`queueName`). */
export type DeadSelection = { ids: string[]; queueName?: string | undefined } | { all: true; queueName?: string | undefined };

/**
 * Requeues dead letters with their attempts reset. The one path of this repair: the admin API's deadLetters.retry
 * and `jfast jobs retry` both run it, so both write the same audit entry (`deadLetters.retry`, the ids, the actor).
 */
export function retryDeadLetters(ctx: OperatorContext, queue: QueueProvider, params: DeadSelection): Promise<{ retried: string[]; missing: string[] }> {
  const all = "all" in params;
  return auditedCall(
    ctx,
    { action: "deadLetters.retry", ids: all ? [] : params.ids, filter: selectionFilter(params) },
    () => backendCall(queue, "retrying dead letters", () => queue.backend.retryDead(all ? { all: true } : { ids: params.ids })),
    (result) => counts(result.retried.length, "retried", result.missing),
    // `all` names no ids up front: the entry records the ones retried.
    all ? (result) => result.retried : undefined,
  );
}

/** Deletes dead letters for good: the admin API's deadLetters.discard and `jfast jobs discard`. */
export function discardDeadLetters(ctx: OperatorContext, queue: QueueProvider, params: DeadSelection): Promise<{ discarded: string[]; missing: string[] }> {
  const all = "all" in params;
  return auditedCall(
    ctx,
    { action: "deadLetters.discard", ids: all ? [] : params.ids, filter: selectionFilter(params) },
    () => backendCall(queue, "discarding dead letters", () => queue.backend.discardDead(all ? { all: true } : { ids: params.ids })),
    (result) => counts(result.discarded.length, "discarded", result.missing),
    all ? (result) => result.discarded : undefined,
  );
}

function selectionFilter(params: DeadSelection): Record<string, unknown> | null {
  const filter = { ...("all" in params ? { all: true } : {}), ...(params.queueName ? { queue: params.queueName } : {}) };
  return Object.keys(filter).length > 0 ? filter : null;
}

function counts(done: number, verb: string, missing: string[]): Record<string, unknown> {
  return { [verb]: done, missing: missing.length, ...(missing.length > 0 ? { missingIds: missing.slice(0, 50) } : {}) };
}
