import type { LimitMap, LimitUsage } from "./limits.js";

/**
 * Where a queue whose broker counts nothing across processes (RabbitMQ) holds its task limits: the service's
 * database (jfast_task_limits, jfast_task_slots; queue/limit-stores.ts), shared by every process.
 * docs/tasks.md#limits
 */
export interface LimitStore {
  readonly kind: "sql";
  setLimits(params: { limits: LimitMap }): Promise<void>;
  /**
   * Takes a slot for a delivered job of a limited task, under the task's lock: granted when its concurrency and rate
   * allow one more start now (the start is then counted, the slot held for `leaseMs` unless extended); else
   * `retryInMs`, when to try again.
   */
  take(params: { task: string; jobId: string; leaseMs: number }): Promise<{ granted: true } | { granted: false; retryInMs: number }>;
  /** The jobs still run: their slots are held `leaseMs` longer. */
  extend(params: { jobIds: string[]; leaseMs: number }): Promise<void>;
  /** The jobs ended (settled, released, cancelled): their slots are free. */
  free(params: { jobIds: string[] }): Promise<void>;
  usage(params: { task: string }): Promise<LimitUsage>;
}
