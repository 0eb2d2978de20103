import type { LimitMap, LimitUsage } from "../../core/limits.js";
import { notSupported } from "../../core/queue-backend.js";
import { RetainedState, type PruneParams } from "../../core/retention.js";
import type { RabbitQueue } from "./context.js";
import { DOCS } from "./errors.js";

/**
 * Dead letters, and with a flow store its finished flows by the completed jobs' retention: a completed, cancelled
 * or acked message is gone from the broker the moment it settles, so there is nothing else to prune
 * (docs/rabbitmq.md#retention).
 */
export async function prune(q: RabbitQueue, { state, select, limit }: PruneParams): Promise<number> {
  if (state === RetainedState.completed) return q.options.flows ? q.options.flows.prune({ select, limit }) : 0;
  if (state !== RetainedState.dead) return 0;
  return q.dead.prune({ select, limit });
}

/**
 * The lease is an exclusive queue, `<queue>.pruner`: the broker lets one connection declare it and drops it with
 * that connection, so a vanished process releases it at once and `ttlMs` is not needed.
 */
export async function claimPruner(q: RabbitQueue, { owner }: { owner: string; ttlMs: number }): Promise<boolean> {
  if (q.prunerOwner !== null) return q.prunerOwner === owner;
  q.prunerOwner = owner;
  const won = await q.connection.withChannel("claim the pruner", async (channel) => {
    try {
      await channel.assertQueue(q.names.pruner, { exclusive: true, durable: false, autoDelete: false });
      return true;
    } catch (error) {
      // 405 RESOURCE_LOCKED: another connection holds it.
      if ((error as { code?: unknown }).code === 405) return false;
      throw error;
    }
  }).catch((error: unknown) => {
    q.prunerOwner = null;
    throw error;
  });
  if (!won) q.prunerOwner = null;
  return won;
}

export async function releasePruner(q: RabbitQueue, { owner }: { owner: string }): Promise<void> {
  if (q.prunerOwner !== owner) return;
  try {
    await q.connection.withChannel("release the pruner", (channel) => channel.deleteQueue(q.names.pruner));
  } finally {
    q.prunerOwner = null;
  }
}

export async function setLimits(q: RabbitQueue, { limits }: { limits: LimitMap }): Promise<void> {
  for (const [task, l] of limits) {
    if (l.ordered) {
      throw notSupported("orderPerKey", `task "${task}" has orderedBy, which RabbitMQ cannot keep: a broker hands a queue's messages to consumers as they come, and cannot hold a key's next messages while its failing one waits for a retry`, {
        hint: "run this task on a queue of the PostgreSQL, Redis or memory backend ([queues.<name>] backend)",
      });
    }
    if (!l.perKey && !l.fair && !l.keyRate) continue;
    // The broker delivers in its own order and the slots store counts per task: a delivered job over its key's
    // limit could only be put back at the tail, spending a delivery and losing its place, over and over.
    throw notSupported(l.fair && !l.perKey && !l.keyRate ? "fairShare" : "keyedLimits", `task "${task}" has ${l.perKey ? "per-key concurrency (concurrency: { key, limit })" : l.keyRate ? "a per-key rate limit (rateLimit: { key, max, perMs })" : "fairness (fair share across keys)"}, which RabbitMQ cannot enforce: the broker delivers each queue's messages in its own order and cannot skip a key's waiting messages to deliver another key's`, {
      hint: "run this task on a queue of the PostgreSQL, Redis or memory backend ([queues.<name>] backend), or use a plain concurrency number",
    });
  }
  if (limits.size > 0 && !q.options.limits) {
    const [task] = limits.keys();
    throw notSupported("limits", `task "${task}" has a limit, which RabbitMQ cannot count across processes, and this service has no database to count it in`, {
      hint: `enable the "database" plugin ([plugins] enabled = ["database", "queue", ...]): limits are then counted in jfast_task_limits and jfast_task_slots`,
      docs: `${DOCS}#task-limits`,
    });
  }
  await q.options.limits?.setLimits({ limits });
  q.limited = limits;
}

export async function limitUsage(q: RabbitQueue, { task }: { task: string }): Promise<LimitUsage> {
  return q.options.limits ? q.options.limits.usage({ task }) : { running: 0, startedInWindow: 0 };
}
