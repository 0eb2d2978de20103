import type { JfastConfig } from "../config/load-config.js";
import type { TaskRegistry } from "../core/registry.js";
import type { AppContext } from "../core/task.js";
import { JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { JfastMetrics } from "../observability/metrics.js";
import type { PluginRegistry } from "../plugins/plugin-registry.js";
import { createTaskExecutor } from "./execute-task.js";
import { Worker } from "./worker.js";

export interface AppWorkerOptions {
  concurrency?: number;
  workerId?: string;
  prefetch?: number;
}

/** `jfast.createWorker()`: a worker over the started queue, running this app's tasks (what `jfast worker` runs). */
export function createAppWorker(params: {
  config: JfastConfig;
  registry: TaskRegistry;
  plugins: PluginRegistry;
  context: AppContext;
  logger: Logger;
  metrics: JfastMetrics;
  options: AppWorkerOptions;
}): Worker {
  const { config, registry, plugins, logger, options } = params;
  const queue = plugins.get("queue");
  if (!queue || !config.queue) {
    throw new JfastError("a worker needs the queue plugin, started", {
      code: "NOT_STARTED",
      hint: `enable "queue" in jfast.toml and await jfast.start() first`,
      docs: "jfast docs worker",
    });
  }
  const executeAttempt = createTaskExecutor({ context: params.context, database: () => plugins.get("database"), logger });
  const telemetry = plugins.get("telemetry");
  return new Worker({
    backend: queue.provider.backend,
    lookup: (name) => registry.get(name),
    execute: telemetry ? telemetry.wrapExecute(executeAttempt, config.queue.name) : executeAttempt,
    logger,
    concurrency: options.concurrency ?? config.queue.concurrency,
    // Claims go in batches sized to the rate jobs finish at, unless a fixed prefetch is given (here, else
    // [plugin.queue] prefetch); a backend whose broker pushes ahead (RabbitMQ) gets no buffer either way.
    ...fixedPrefetch(options.prefetch ?? config.queue.prefetch),
    leaseMs: config.queue.visibilityTimeoutMs,
    backoffBaseMs: config.queue.backoffBaseMs,
    pollIntervalMs: config.queue.pollIntervalMs,
    defaultMaxAttempts: config.queue.maxAttempts,
    maxSnoozes: config.queue.maxSnoozes,
    observer: queue.control.observe(params.metrics),
    ...(queue.provider.pauses ? { paused: queue.provider.pauses } : {}),
    ...(options.workerId ? { workerId: options.workerId } : {}),
  });
}

/** A fixed worker prefetch, or nothing for the adaptive one. */
function fixedPrefetch(prefetch: number | null | undefined): { prefetch?: number } {
  return prefetch === null || prefetch === undefined ? {} : { prefetch };
}
