import { Job, type JobInit } from "../../src/core/job.js";
import type { PauseStore } from "../../src/core/pause.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";

/** How a backend's entry file plugs into the shared suite: a fresh, isolated backend per test. */
export interface BackendFactory {
  name: string;
  /**
   * `pauses`: where the service would keep paused tasks for this backend (the database, the backend's own
   * store); absent means the backend's own store, else memory.
   */
  create(): Promise<{ backend: QueueBackend; cleanup(): Promise<void>; pauses?: PauseStore }>;
  /** Capabilities that are genuinely different per backend (never used to skip the contract). */
  /** Lease granularity: rabbitmq and redis round to whole units; the suite waits this much past a lease. */
  leaseSlackMs?: number;
  /** False where depthsByTask answers NOT_SUPPORTED (RabbitMQ); the suite then checks that typed answer. */
  perTaskDepths?: boolean;
  /** True where searchDead answers through an index (PostgreSQL); elsewhere the suite checks NOT_SUPPORTED. */
  payloadIndex?: boolean;
}

export function makeJob(init: Partial<JobInit> & { task?: string } = {}): Job {
  const job = new Job({ task: "conf.noop", payload: {}, tenantId: null, requestId: null, trace: null, ...init });
  job.maxAttempts ??= 3;
  return job;
}

/**
 * `backend` with one method replaced, to count, delay or fail calls: the replacement calls the real method
 * itself when it should; every other member is the backend's own, bound to it.
 */
export function withMethod<B extends object, K extends keyof B>(backend: B, name: K, method: B[K]): B {
  return new Proxy(backend, {
    get(target, property) {
      if (property === name) return method;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export const WORKER = "conformance-worker";

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}
