import type { QueueProvider } from "../../queue/queue-provider.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { backendCall } from "../queue-access.js";

/**
 * Requeues dead letters with their attempts reset: the ids named, or every one (`all`, the CLI's `--all`).
 * The one path of this repair: the admin API's deadLetters.retry and `jfast jobs retry` both run it, so both write
 * the same audit entry (`deadLetters.retry`, the ids retried, the actor).
 */
export function retryDeadLetters(
  ctx: OperatorContext,
  queue: QueueProvider,
  params: { ids: string[]; queueName?: string | undefined } | { all: true; queueName?: string | undefined },
): Promise<{ retried: string[]; missing: string[] }> {
  const all = "all" in params;
  const filter = { ...(all ? { all: true } : {}), ...(params.queueName ? { queue: params.queueName } : {}) };
  return auditedCall(
    ctx,
    { action: "deadLetters.retry", ids: all ? [] : params.ids, filter: Object.keys(filter).length > 0 ? filter : null },
    () => backendCall(queue, "retrying dead letters", () => queue.backend.retryDead(all ? { all: true } : { ids: params.ids })),
    (result) => ({
      retried: result.retried.length,
      missing: result.missing.length,
      ...(result.missing.length > 0 ? { missingIds: result.missing.slice(0, 50) } : {}),
    }),
    // `all` names no ids up front: the entry records the ones retried.
    all ? (result) => result.retried : undefined,
  );
}
