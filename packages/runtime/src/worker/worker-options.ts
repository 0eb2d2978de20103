import { MAX_CONCURRENCY } from "../core/concurrency.js";
import type { Job } from "../core/job.js";
import { ConfigError } from "../errors/jfast-error.js";
import type { PausedTaskSet } from "../core/pause.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { Cancellation, TaskDefinition } from "../core/task.js";
import type { Logger } from "../observability/logger.js";
import type { JobEvents } from "../core/job-events.js";
import type { WorkerRegistryOptions } from "./presence.js";

export interface WorkerOptions {
  backend: QueueBackend;
  /** Finds the handler for a task name; undefined means the job is dead at once ("unknown task"). */
  lookup: (task: string) => TaskDefinition | undefined;
  /** Runs one attempt (opens the TaskSession, claims the inbox key, calls the handler). */
  execute: (definition: TaskDefinition, job: Job, cancellation: Cancellation) => Promise<unknown>;
  logger: Logger;
  concurrency: number;
  leaseMs: number;
  backoffBaseMs: number;
  /** Slow safety net: how long an idle worker waits for a wake-up before claiming anyway. */
  pollIntervalMs: number;
  defaultMaxAttempts: number;
  /** `[plugin.queue] max_snoozes`: past this many snoozes a job is dead-lettered (default 100). */
  maxSnoozes?: number;
  /** `[plugin.queue] max_result_bytes`: the largest handler result stored with its job (default 64 KiB). */
  maxResultBytes?: number;
  /** `[plugin.queue] job_log_lines`: the `tools.log` lines an attempt keeps (default 200). */
  jobLogLines?: number;
  workerId?: string;
  /** Where each attempt's claim, start and end are announced (core/job-events.ts): metrics, throughput, `jfast.on`. */
  events?: JobEvents;
  /** The named queue it runs, as its job events name it (default "default"). */
  queue?: string;
  /**
   * Jobs claimed ahead of a free slot and held (leased, heartbeated) in a local buffer, so that claims go in
   * batches instead of one round trip (and one commit) per finished job. A backend whose broker pushes ahead
   * (`capabilities.pushesAhead`: RabbitMQ) is told the same target with each claim and the broker holds those
   * jobs instead (its prefetch); the worker then keeps no buffer. Buffered jobs are released, attempt returned,
   * on shutdown.
   * Undefined: adaptive, about PREFETCH_HORIZON_MS of work at the rate jobs have been finishing, never more
   * than PREFETCH_MAX jobs nor (except for a broker that pushes ahead) fewer than `concurrency`.
   */
  prefetch?: number;
  /**
   * What the queue's tasks limit at claim (docs/flow-control.md): `counted`, a task whose starts a claim counts, so
   * its jobs are claimed only for free slots and a short claim proves nothing about them while the slots are taken;
   * `fair`, a task with fairness, so the adaptive buffer stays short (PREFETCH_FAIR_MAX). Absent: neither.
   */
  claimLimits?: { counted: boolean; fair: boolean };
  /** Paused tasks (docs/worker.md#pausing-a-task): not claimed where the backend filters, else handed back. */
  paused?: PausedTaskSet;
  /**
   * The worker's record in its backend's registry (docs/worker.md#the-worker-registry): how often it is written and
   * how long a reader keeps it after the last write. A backend without a registry (RabbitMQ without the database)
   * gets none.
   */
  registry?: WorkerRegistryOptions;
}

export function checkConcurrency(concurrency: number): void {
  if (Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_CONCURRENCY) return;
  throw new ConfigError(`a worker's concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, got ${concurrency}`, {
    code: "CONFIG_INVALID",
    hint: `run more worker processes for more throughput than ${MAX_CONCURRENCY} slots`,
    docs: "jfast docs worker#concurrency",
  });
}
