import type { Fairness } from "../core/limits.js";
import { LIMIT_KEY_MAX, normalizeLimits } from "../core/limits.js";
import type { TaskRegistry } from "../core/registry.js";
import type { TaskOptions } from "../core/task.js";
import { ConfigError } from "../errors/jfast-error.js";
import type { NamedQueueConfig, QueueBackendName, QueueFairness } from "./config.js";

const DOCS = "jfast docs flow-control#fairness-on-a-whole-queue";

/**
 * `[queues.<name>] fairness` resolved into each task of the queue at start-up, so the claim, which enforces fairness
 * per task, and the enqueue, which computes each job's key, see it as the task's own `fairness` option
 * (docs/flow-control.md#fairness-on-a-whole-queue):
 *  - a task with its own `fairness` keeps it (the task's setting wins, weights included);
 *  - a task with a key of its own (`concurrency: { key }` or `rateLimit: { key }`) takes turns by that key, with
 *    the queue's weights;
 *  - a task with `orderedBy` is left as it is: it runs its keys' jobs one at a time, in order, not in turns;
 *  - every other task takes turns by the queue's key: the job's tenant, or the payload field `key` names.
 */
export function resolveQueueFairness(registry: TaskRegistry, queues: readonly NamedQueueConfig[], backend: QueueBackendName): void {
  for (const queue of queues) {
    if (!queue.fairness) continue;
    if (backend === "rabbitmq") {
      throw new ConfigError(`[queues.${queue.name}] fairness is set, and the RabbitMQ queue cannot take turns by key: the broker delivers each queue's messages in its own order`, {
        code: "NOT_SUPPORTED",
        hint: `remove fairness from [queues.${queue.name}], or run the service's queue on PostgreSQL, Redis or memory ([plugin.queue] backend)`,
        docs: DOCS,
      });
    }
    for (const task of registry.tasksIn(queue.name)) {
      const options = task.options as TaskOptions;
      if (options.fairness !== undefined || options.orderedBy !== undefined) continue;
      const ownKey = typeof options.concurrency === "object" || (options.rateLimit !== undefined && "key" in options.rateLimit);
      const fairness: Fairness = ownKey ? { weights: queue.fairness.weights } : fairnessOf(queue.name, queue.fairness);
      const resolved = { ...options, fairness };
      try {
        normalizeLimits(resolved, `task("${task.name}")`);
      } catch (error) {
        throw new ConfigError(`task "${task.name}" cannot take [queues.${queue.name}] fairness: ${(error as Error).message}`, {
          code: "CONFIG_INVALID",
          hint: `give the task its own fairness option, or move it to a queue without fairness (its queue option)`,
          docs: DOCS,
        });
      }
      registry.resolveOptions(task.name, resolved);
    }
  }
}

function fairnessOf(queue: string, setting: QueueFairness): Fairness {
  const { key, weights } = setting;
  if (key === null) return Object.keys(weights).length === 0 ? "tenant" : { weights };
  const path = key.split(".");
  return {
    weights,
    key(payload: unknown, job: { task: string }) {
      let value: unknown = payload;
      for (const field of path) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[field] : undefined;
      if (typeof value === "number" && Number.isFinite(value)) value = String(value);
      if (typeof value !== "string" || value.length === 0 || value.length > LIMIT_KEY_MAX) {
        throw new TypeError(`task("${job.task}") is on [queues.${queue}], which shares by the payload's "${key}", and this payload's "${key}" is ${value === undefined ? "missing" : typeof value === "string" ? `a string of ${value.length} characters` : `not a string (${typeof value})`}: give every job of the queue's tasks a non-empty "${key}" (a string or number, at most ${LIMIT_KEY_MAX} characters), or give the task its own fairness option (${DOCS})`);
      }
      return value;
    },
  };
}
