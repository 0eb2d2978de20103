import { z } from "zod";

/** `[plugin.queue]` keys only the in-memory queue reads: none beyond the keys every queue has. */
export const memoryQueueKeys = {
  backend: z.literal("memory"),
};

export interface MemoryQueueConfig {
  backend: "memory";
  /** In this process: no url. */
  url: null;
}

export const memoryQueue = {
  backend: "memory",
  label: "the in-memory queue",
  keys: memoryQueueKeys,
  resolve(): MemoryQueueConfig {
    return { backend: "memory", url: null };
  },
  /** createMemoryBackend takes nothing: one process, one map. */
  toOptions(): Record<string, never> {
    return {};
  },
} as const;
