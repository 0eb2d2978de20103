import { expect } from "vitest";
import { stepInputsOf } from "../../src/core/flow-tools.js";
import { Job, type JobInit } from "../../src/core/job.js";
import type { PauseStore } from "../../src/core/pause.js";
import type { BackendCapabilities, QueueBackend, SlotOffer } from "../../src/core/queue-backend.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { createLogger } from "../../src/observability/logger.js";
import type { PausedTasks } from "../../src/queue/paused-tasks.js";
import { Worker } from "../../src/worker/worker.js";
import type { WorkerRegistryOptions } from "../../src/worker/presence.js";
import { lifeOf } from "../../src/worker/cancellation.js";

/** How a backend's entry file plugs into the shared suite: a fresh, isolated backend per test. */
export interface BackendFactory {
  name: string;
  /**
   * `pauses`: where the service would keep paused tasks for this backend (the database, the backend's own
   * store); absent means the backend's own store, else memory. `peer`: another backend on the same queue with
   * connections of its own, as another process would open it (closed by the cleanup); absent for the in-process
   * memory queue.
   */
  create(): Promise<{ backend: QueueBackend; cleanup(): Promise<void>; pauses?: PauseStore; peer?: () => Promise<QueueBackend> }>;
  /**
   * One service's named queues (docs/queues.md): a backend per name, as plugins/queue.ts opens them (the
   * backend name from `backendQueueName`), all over one store. `pauses` as in `create`, per queue.
   */
  createQueues?(names: readonly string[]): Promise<{
    backends: Record<string, QueueBackend>;
    pauses?: Record<string, PauseStore>;
    cleanup(): Promise<void>;
  }>;
  /**
   * What the backend can do: the backend module's own capabilities object (core/backend/capabilities.ts), which
   * the suite reads to check either the feature or its NOT_SUPPORTED answer, never to skip the contract. Each
   * suite checks that a backend it opens says the same (`expectOwnCapabilities`).
   */
  capabilities: BackendCapabilities;
  /** Lease granularity: rabbitmq and redis round to whole units; the suite waits this much past a lease. */
  leaseSlackMs?: number;
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

/** The capabilities the suite reads for `factory` are those its backend says it has. */
export function expectOwnCapabilities(factory: BackendFactory, backend: QueueBackend): void {
  expect(backend.capabilities).toEqual(factory.capabilities);
}

/**
 * `backend` counting the jobs it hands over in process (QueueBackend.offerSlots): whether a job went that way,
 * without racing its handler against the enqueue's reply.
 */
export function countingHandOffs<B extends QueueBackend>(backend: B): { backend: B; handedOver: () => number } {
  let handed = 0;
  const offerSlots = (offer: SlotOffer) =>
    backend.offerSlots({
      ...offer,
      deliver: (jobs, reserved) => {
        handed += jobs.length;
        offer.deliver(jobs, reserved);
      },
    });
  return { backend: withMethod(backend, "offerSlots", offerSlots as B["offerSlots"]), handedOver: () => handed };
}

/**
 * A started worker running `tasks` (their handlers called directly, no service around them) on `backend`, with
 * a silent logger and a 50 ms backoff base. The caller stops it.
 */
export function startTestWorker(params: {
  backend: QueueBackend;
  tasks: TaskDefinition[];
  concurrency: number;
  pollIntervalMs: number;
  leaseMs?: number;
  paused?: PausedTasks | undefined;
  maxSnoozes?: number;
  maxResultBytes?: number;
  workerId?: string;
  /** The worker registry's heartbeat and forget time (docs/worker.md#the-worker-registry). */
  registry?: WorkerRegistryOptions;
}): Worker {
  const byName = new Map(params.tasks.map((t) => [t.name, t]));
  const worker = new Worker({
    backend: params.backend,
    lookup: (name) => byName.get(name),
    execute: (definition, job, cancellation) =>
      Promise.resolve(
        definition.handler(job.payload, {
          ctx: { serviceName: "test", require: <T,>() => undefined as T },
          job,
          session: undefined,
          signal: cancellation.signal,
          locals: {},
          // A flow step's inputs, loaded by the worker before the attempt (core/flow-tools.ts).
          flow: stepInputsOf(job)?.flow,
          batch: stepInputsOf(job)?.batch,
          // tools.progress and tools.log as the worker gives them (worker/attempt-life.ts).
          progress: (value) => lifeOf(cancellation, job)!.progress(value),
          get log() {
            return lifeOf(cancellation, job)!.log;
          },
        }),
      ),
    logger: createLogger({ service: "test", level: "silent" }),
    concurrency: params.concurrency,
    leaseMs: params.leaseMs ?? 30_000,
    backoffBaseMs: 50,
    pollIntervalMs: params.pollIntervalMs,
    defaultMaxAttempts: 3,
    ...(params.maxSnoozes !== undefined ? { maxSnoozes: params.maxSnoozes } : {}),
    ...(params.maxResultBytes !== undefined ? { maxResultBytes: params.maxResultBytes } : {}),
    ...(params.workerId !== undefined ? { workerId: params.workerId } : {}),
    ...(params.registry ? { registry: params.registry } : {}),
    ...(params.paused ? { paused: params.paused } : {}),
  });
  worker.start();
  return worker;
}

/** Keeps the event loop busy for `ms`: no timer, no socket, no heartbeat of this thread runs meanwhile. */
export function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Never yields.
  }
}

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

/**
 * Enqueues one job next to an idle worker whose handler records the jobs it gets in `seen`, and checks the
 * in-process hand-off gave the handler its own copy: started before enqueue returned, another object with the
 * same payload, the caller's job untouched and its later changes not reaching the handler.
 */
export async function expectOwnCopyHandedOver(enqueue: (job: Job) => Promise<unknown>, seen: readonly Job[]): Promise<void> {
  const job = makeJob({ task: "gate.quick", payload: { items: [1, 2], at: "x" } });
  await enqueue(job);
  const [handed] = seen;
  expect(handed).toBeDefined();
  expect(handed).not.toBe(job);
  expect(handed!.payload).toEqual({ items: [1, 2], at: "x" });
  expect(handed!.payload).not.toBe(job.payload);
  expect(handed!.createdAt.getTime()).toBe(job.createdAt.getTime());
  expect(job.attempts).toBe(0);
  (job.payload as { items: number[] }).items.push(3);
  expect(handed!.payload).toEqual({ items: [1, 2], at: "x" });
}
