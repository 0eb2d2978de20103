import type { JfastConfig } from "../config/load-config.js";
import type { TaskRegistry } from "../core/registry.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { ConfigError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import { enqueueWithinQueues } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { collectSchedules } from "./schedule.js";
import { createScheduleControl, type ScheduleControl } from "./schedule-control.js";
import { Scheduler, type SchedulerOptions } from "./scheduler.js";
import type { ScheduleStore } from "./stores/schedule-store.js";

/**
 * `[plugin.queue] scheduler = true`: builds the claim store that fits the queue and starts the loop. Runs in
 * every process that calls jfast.start(), API replicas and workers alike; the store makes them agree.
 *  - PostgreSQL queue: claims in jfast_schedules of the same database, committed with the job.
 *  - Redis queue: claims in Redis beside the queue's keys.
 *  - RabbitMQ queue: claims in jfast_schedules (needs the database plugin), then the job is published.
 *  - memory queue: claims in this process (single-process use).
 */
export async function startScheduler(params: {
  config: JfastConfig;
  registry: TaskRegistry;
  queue: QueueProvider;
  database: DatabaseProvider | null;
  logger: Logger;
  options?: Partial<Omit<SchedulerOptions, "schedules" | "store" | "logger">>;
}): Promise<Scheduler> {
  const { config, registry, queue, database, logger } = params;
  const schedules = collectSchedules(registry, { requireTasks: true });
  const store = await createStore({ config, queue, database });
  const scheduler = new Scheduler({ schedules, store, logger, ...params.options });
  scheduler.control = createScheduleControl({
    store,
    declared: scheduler.declaredSchedules,
    registry,
    enqueue: (jobs) => queue.enqueue(jobs),
    now: () => scheduler.storeNow(),
    changed: () => scheduler.changed(),
  });
  scheduler.start();
  logger.info("scheduler started", { store: store.kind, schedules: schedules.map((s) => s.name) });
  return scheduler;
}

/**
 * The control of schedules for a process that runs no scheduler (a `jfast schedules …` command, an API replica
 * with the scheduler off): the same store the schedulers read, so they see the change at their next read.
 */
export async function openScheduleControl(params: { config: JfastConfig; registry: TaskRegistry; queue: QueueProvider; database: DatabaseProvider | null }): Promise<{ control: ScheduleControl; close(): Promise<void> }> {
  const store = await createStore(params);
  const declared = collectSchedules(params.registry, { requireTasks: false });
  let offset = 0;
  if (store.serverTime) offset = (await store.serverTime()) - Date.now();
  const control = createScheduleControl({ store, declared, registry: params.registry, enqueue: (jobs) => params.queue.enqueue(jobs), now: () => Date.now() + offset });
  return { control, close: () => store.close() };
}

async function createStore(params: { config: JfastConfig; queue: QueueProvider; database: DatabaseProvider | null }): Promise<ScheduleStore> {
  const { config, queue, database } = params;
  const backend = queue.backend;
  const enqueue = (jobs: Parameters<QueueProvider["enqueue"]>[0]) => queue.enqueue(jobs);
  switch (backend.kind) {
    case "memory": {
      const { createMemoryScheduleStore } = await import("./stores/memory-store.js");
      return createMemoryScheduleStore({ enqueue });
    }
    case "redis": {
      const { createRedisScheduleStore } = await import("./stores/redis-store.js");
      return createRedisScheduleStore({ url: config.queue!.url!, cluster: config.queue!.cluster, queue: config.queue!.name, enqueue });
    }
    default: {
      if (!database) {
        throw new ConfigError(`the scheduler needs a store every process shares, and the ${backend.kind} queue has none`, {
          code: "CONFIG_PLUGIN_MISSING",
          hint: `add "database" to [plugins] enabled (ticks are then claimed in jfast_schedules), or set [plugin.queue] scheduler = false`,
          docs: "jfast docs scheduler#stores",
        });
      }
      const { createPostgresScheduleStore } = await import("./stores/postgres-store.js");
      // Same database: the claim and the job row commit together.
      const within = backend.capabilities.transactionalEnqueue;
      return createPostgresScheduleStore({
        db: database.sql,
        enqueue,
        // Each tick's job into its task's named queue (docs/queues.md).
        enqueueWithin: within ? (executor, jobs) => enqueueWithinQueues(queue, executor, jobs.map(queue.prepare)) : undefined,
      });
    }
  }
}
