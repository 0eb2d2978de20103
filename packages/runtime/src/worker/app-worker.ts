import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { JfastConfig } from "../config/load-config.js";
import type { NamedQueueConfig } from "../queue/config.js";
import type { JobEvents } from "../core/job-events.js";
import { DEFAULT_QUEUE } from "../core/named-queue.js";
import { countsAtClaim, limitsOf } from "../core/limits.js";
import type { TaskRegistry } from "../core/registry.js";
import type { AppContext, JobMiddleware } from "../core/task.js";
import { JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { PluginRegistry } from "../plugins/plugin-registry.js";
import { createTaskExecutor } from "./execute-task.js";
import { createIsolateRunner, isTypeScript, type IsolateRunner } from "./isolate/isolate-runner.js";
import { Worker } from "./worker.js";
import { groupWorkers, type AppWorker } from "./worker-group.js";
import type { WorkerRegistryOptions } from "./presence.js";

export interface AppWorkerOptions {
  /** The `default` queue's slots (default `[plugin.queue] concurrency`); a named queue has its own `concurrency`. */
  concurrency?: number;
  /** The named queues to run (`jfast worker --queues email,media`); default every one not `paused` in jfast.toml. */
  queues?: readonly string[];
  workerId?: string;
  prefetch?: number;
  /** Its record in the worker registry: heartbeat and forget time (docs/worker.md#the-worker-registry). */
  registry?: WorkerRegistryOptions;
}

/**
 * `jfast.createWorker()`: workers over the started queue, running this app's tasks (what `jfast worker` runs):
 * one Worker per named queue it runs, each with its queue's slots, lease and attempts (docs/queues.md#workers).
 */
export function createAppWorker(params: {
  config: JfastConfig;
  registry: TaskRegistry;
  plugins: PluginRegistry;
  context: AppContext;
  logger: Logger;
  /** Where each attempt is announced: /metrics, the throughput history and `jfast.on` listen there. */
  events: JobEvents;
  middleware: readonly JobMiddleware[];
  options: AppWorkerOptions;
}): AppWorker {
  const { config, registry, plugins, logger, options } = params;
  const queue = plugins.get("queue");
  if (!queue || !config.queue) {
    throw new JfastError("a worker needs the queue plugin, started", {
      code: "NOT_STARTED",
      hint: `enable "queue" in jfast.toml and await jfast.start() first`,
      docs: "jfast docs worker",
    });
  }
  const queueConfig = config.queue;
  const isolates = isolateRunnerFor(registry, params.context.serviceName, logger, options.concurrency ?? queueConfig.concurrency);
  const executeAttempt = createTaskExecutor({
    context: params.context,
    database: () => plugins.get("database"),
    logger,
    middleware: params.middleware,
    ...(isolates ? { isolates } : {}),
  });
  const telemetry = plugins.get("telemetry");
  const id = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const workers = new Map<string, Worker>();
  for (const named of selectQueues(queueConfig.queues, options.queues, logger)) {
    const { backend, pauses } = queue.provider.queue(named.name);
    const concurrency = named.name === DEFAULT_QUEUE ? (options.concurrency ?? named.concurrency) : named.concurrency;
    workers.set(
      named.name,
      new Worker({
        backend,
        lookup: (name) => registry.get(name),
        execute: telemetry ? telemetry.wrapExecute(executeAttempt, named.backendName) : executeAttempt,
        logger: named.name === DEFAULT_QUEUE ? logger : withQueueField(logger, named.name),
        concurrency,
        // Claims go in batches sized to the rate jobs finish at, unless a fixed prefetch is given (here, else
        // [plugin.queue] prefetch); a backend whose broker pushes ahead (RabbitMQ) gets no buffer either way.
        ...fixedPrefetch(options.prefetch ?? queueConfig.prefetch),
        leaseMs: named.visibilityTimeoutMs,
        backoffBaseMs: queueConfig.backoffBaseMs,
        pollIntervalMs: queueConfig.pollIntervalMs,
        defaultMaxAttempts: named.maxAttempts,
        maxSnoozes: queueConfig.maxSnoozes,
        maxResultBytes: queueConfig.maxResultBytes,
        jobLogLines: queueConfig.jobLogLines,
        events: params.events,
        queue: named.name,
        ...(pauses ? { paused: pauses } : {}),
        claimLimits: claimLimitsOf(registry.tasksIn(named.name)),
        workerId: id,
        ...(options.registry ? { registry: options.registry } : {}),
      }),
    );
  }
  const group = groupWorkers({ id, workers });
  if (!isolates) return group;
  return {
    ...group,
    get activeJobs() {
      return group.activeJobs;
    },
    get processedCount() {
      return group.processedCount;
    },
    stop: async (stop) => {
      try {
        await group.stop(stop);
      } finally {
        await isolates.close();
      }
    },
  };
}

/** What a queue's tasks limit at claim, for its worker's buffer and idle rule (WorkerOptions.claimLimits). */
function claimLimitsOf(tasks: Parameters<typeof limitsOf>[0]): { counted: boolean; fair: boolean } {
  const limits = [...limitsOf(tasks).values()];
  return { counted: limits.some(countsAtClaim), fair: limits.some((l) => l.fair !== undefined) };
}

/**
 * The runner of isolated handlers, when a task asks for one. Such a task must come from a module's tasks file:
 * the isolate imports that file to find its handler.
 */
function isolateRunnerFor(registry: TaskRegistry, serviceName: string, logger: Logger, concurrency: number): IsolateRunner | null {
  const isolated = registry.all().filter((t) => t.options.isolate);
  if (isolated.length === 0) return null;
  const orphan = isolated.find((t) => !t.file);
  if (orphan) {
    throw new JfastError(`task "${orphan.name}" asks for isolate: "${orphan.options.isolate}" but was not declared in a module's tasks file`, {
      code: "CONFIG_INVALID",
      hint: `declare it with task(...) in modules/<name>/tasks.ts: its isolate imports that file to find the handler`,
      docs: "jfast docs tasks#isolated-handlers",
    });
  }
  const kinds = new Map(isolated.map((t) => [`${t.options.isolate}:${isTypeScript(t.file!)}`, { mode: t.options.isolate!, typescript: isTypeScript(t.file!) }]));
  const files = [...new Map(isolated.map((t) => [t.file!, { file: t.file!, module: t.module }])).values()];
  return createIsolateRunner({ serviceName, logger, maxIdle: Math.max(1, concurrency), warm: [...kinds.values()], files });
}

/** The queues a worker runs: those named (each must be declared), else every one not paused in jfast.toml. */
function selectQueues(queues: readonly NamedQueueConfig[], named: readonly string[] | undefined, logger: Logger): NamedQueueConfig[] {
  if (named === undefined) {
    const paused = queues.filter((q) => q.paused);
    if (paused.length > 0) logger.info("not running paused queues", { queues: paused.map((q) => q.name) });
    return queues.filter((q) => !q.paused);
  }
  return [...new Set(named)].map((name) => {
    const queue = queues.find((q) => q.name === name);
    if (!queue) {
      throw new JfastError(`this service has no queue named "${name}"`, {
        code: "QUEUE_UNKNOWN",
        hint: `its queues are ${queues.map((q) => q.name).join(", ")}; declare another as [queues.${name}] in jfast.toml`,
        docs: "jfast docs queues#workers",
      });
    }
    return queue;
  });
}

/** A named queue's worker logs which queue it speaks of. */
function withQueueField(logger: Logger, queue: string): Logger {
  const add = (fields?: Record<string, unknown>) => ({ queue, ...fields });
  return {
    debug: (message, fields) => logger.debug(message, add(fields)),
    info: (message, fields) => logger.info(message, add(fields)),
    warn: (message, fields) => logger.warn(message, add(fields)),
    error: (message, fields) => logger.error(message, add(fields)),
  };
}

/** A fixed worker prefetch, or nothing for the adaptive one. */
function fixedPrefetch(prefetch: number | null | undefined): { prefetch?: number } {
  return prefetch === null || prefetch === undefined ? {} : { prefetch };
}
