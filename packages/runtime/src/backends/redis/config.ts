import { z } from "zod";
import type { RetainedState, Retention } from "../../core/retention.js";
import { ConfigError } from "../../errors/jfast-error.js";
import type { RedisBackendOptions } from "./redis-backend.js";

/** `[plugin.queue]` keys only the Redis queue reads (with the keys every queue has). */
export const redisQueueKeys = {
  backend: z.literal("redis"),
  /** `url` names seed nodes of a Redis Cluster (comma-separated); connect through the Cluster client. */
  cluster: z.boolean().default(false),
  /** Replicas that must acknowledge an enqueue and a completion (WAIT) before it returns; 0: none. */
  wait_replicas: z.number().int().min(0).max(10).default(0),
  /** How long WAIT may take (seconds) before the write fails as not replicated. */
  wait_timeout: z.number().positive().default(1),
};

type Section = z.output<z.ZodObject<typeof redisQueueKeys>> & { url?: string | undefined };

export interface RedisQueueConfig {
  backend: "redis";
  /** REDIS_URL, else `[plugin.queue] url`; with `cluster`, seed nodes. */
  url: string;
  cluster: boolean;
  waitReplicas: number;
  waitTimeoutMs: number;
}

export const redisQueue = {
  backend: "redis",
  label: "the Redis queue",
  keys: redisQueueKeys,
  resolve(section: Section, at: { file: string; env: NodeJS.ProcessEnv }): RedisQueueConfig {
    const url = at.env.REDIS_URL ?? section.url;
    if (!url) {
      throw new ConfigError(`${at.file}: [plugin.queue] backend = "redis" needs a url`, {
        code: "CONFIG_INVALID",
        hint: "set [plugin.queue] url, or the REDIS_URL environment variable",
        docs: "jfast docs configuration",
      });
    }
    return { backend: "redis", url, cluster: section.cluster, waitReplicas: section.wait_replicas, waitTimeoutMs: Math.round(section.wait_timeout * 1000) };
  },
  /** What the configuration decides of one named queue's backend; the logger is the caller's. */
  toOptions(
    config: RedisQueueConfig,
    queue: { backendName: string; keepCompleted: boolean; retention: Record<RetainedState, Retention> },
  ): Omit<RedisBackendOptions, "logger"> {
    return {
      url: config.url,
      queue: queue.backendName,
      cluster: config.cluster,
      waitReplicas: config.waitReplicas,
      waitTimeoutMs: config.waitTimeoutMs,
      ...retentionOf(queue),
    };
  },
} as const;

/**
 * Redis prunes completed jobs by age in complete.lua itself and lets a cancelled job's hash expire; the pruner
 * does the rest (counts, dead letters). Kept by count or forever: no expiry of their own, the pruner decides.
 */
function retentionOf(queue: { keepCompleted: boolean; retention: Record<RetainedState, Retention> }): { completedRetentionMs: number; cancelledRetentionMs: number } {
  const ms = (retention: Retention) => (retention.kind === "age" ? retention.ms : 0);
  const completed = queue.retention.completed;
  return {
    completedRetentionMs: !queue.keepCompleted ? 0 : completed.kind === "age" ? Math.max(1, completed.ms) : NEVER_MS,
    cancelledRetentionMs: ms(queue.retention.cancelled),
  };
}

/** complete.lua's retention for jobs it must not expire by age: a century. */
const NEVER_MS = 100 * 365 * 86_400_000;
