import { z } from "zod";
import type { BlockedKey } from "../../core/backend/admin.js";
import { LIMIT_KEY_MAX } from "../../core/limits.js";
import { auditedCall } from "../audit-call.js";
import { backendCall, requireQueue } from "../queue-access.js";
import { queueInput, queueScope } from "../queue-scope.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";

export interface BlockedKeysView {
  /** False: the service runs no queue. */
  enabled: boolean;
  /** False: the queue's backend keeps no order per key (RabbitMQ), so no key can be blocked. */
  supported: boolean;
  keys: BlockedKey[];
}

/** Keys of flow control per key (docs/flow-control.md): the keys a dead job blocks, and the skip that frees one. */
export const keysRouter = router({
  /** Keys of tasks with `orderedBy` (onDead "block") held by a dead job, oldest death first, with how many wait. */
  blocked: viewerProcedure
    .input(z.strictObject({ queue: queueInput, limit: z.number().int().min(1).max(500).default(100) }).optional())
    .query(async ({ ctx, input }): Promise<BlockedKeysView> => {
      const service = ctx.sources.queue();
      if (!service) return { enabled: false, supported: false, keys: [] };
      const queue = queueScope(service, input?.queue);
      if (!queue.backend.capabilities.orderPerKey) return { enabled: true, supported: false, keys: [] };
      const keys = await backendCall(queue, "listing blocked keys", () => queue.backend.blockedKeys({ limit: input?.limit ?? 100 }));
      return { enabled: true, supported: true, keys };
    }),
  /**
   * Skips a blocked key: its dead jobs stay dead letters but no longer hold it, so its next job starts. Audited
   * (`keys.skip`, with the dead jobs' ids).
   */
  skip: operatorProcedure
    .input(z.strictObject({ queue: queueInput, task: z.string().min(1).max(200), key: z.string().max(LIMIT_KEY_MAX) }))
    .mutation(async ({ ctx, input }): Promise<{ task: string; key: string; skipped: string[] }> => {
      const queue = queueScope(requireQueue(ctx.sources), input.queue);
      const result = await auditedCall(
        ctx,
        { action: "keys.skip", ids: [], filter: { task: input.task, key: input.key, ...(input.queue ? { queue: input.queue } : {}) } },
        () => backendCall(queue, "skipping a blocked key", () => queue.backend.skipBlockedKey({ task: input.task, key: input.key })),
        (r) => ({ skipped: r.skipped.length }),
        (r) => r.skipped,
      );
      return { task: input.task, key: input.key, skipped: result.skipped };
    }),
});
