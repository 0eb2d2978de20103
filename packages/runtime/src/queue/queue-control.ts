import type { QueueBackend } from "../core/queue-backend.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import type { Logger } from "../observability/logger.js";
import { createMemoryPauseStore, createSqlPauseStore } from "./pause-stores.js";
import { PausedTasks } from "./paused-tasks.js";
import { ThroughputRecorder } from "./throughput-recorder.js";
import { createMemoryThroughputStore, createSqlThroughputStore } from "./throughput-stores.js";

/**
 * What the service keeps next to its queue for operators: paused tasks and the throughput history. Opened at
 * start, closed at stop (which writes the last throughput counts).
 */
export interface QueueControl {
  /** null where no shared store exists (RabbitMQ without the database plugin): pausing is refused. */
  pauses: PausedTasks | null;
  /** Counts the attempts this process's workers end on the queue (the queue plugin feeds it from the job events). */
  throughput: ThroughputRecorder;
  close(): Promise<void>;
}

/**
 * Picks where paused tasks live: the backend's own store when its claim reads one (Redis), else the database
 * when the plugin is on (any backend), else memory for the memory queue. Throughput goes to the database when
 * there is one (it survives restarts), else to the backend's own store (Redis), else memory.
 */
export async function openQueueControl(params: {
  backend: QueueBackend;
  database: DatabaseProvider | null;
  queue: string;
  logger: Logger;
}): Promise<QueueControl> {
  const { backend, database, queue, logger } = params;
  const store =
    (backend.capabilities.pauseStore ? backend.pauseStore() : null) ??
    (database ? createSqlPauseStore({ db: database.sql, queue }) : backend.kind === "memory" ? createMemoryPauseStore() : null);
  const pauses = store ? new PausedTasks({ store, logger }) : null;
  await pauses?.start();
  const throughputStore = database ? createSqlThroughputStore({ db: database.sql, queue }) : (backend.capabilities.throughputStore ? backend.throughputStore() : createMemoryThroughputStore());
  const throughput = new ThroughputRecorder({ store: throughputStore, logger });
  throughput.start();
  return {
    pauses,
    throughput,
    async close() {
      pauses?.stop();
      await throughput.close();
    },
  };
}

/** Why pausing is refused on this service, for the admin API (null when it is supported). */
export function pauseUnsupportedReason(params: { backend: QueueBackend; pauses: PausedTasks | null }): string | null {
  if (params.pauses) return null;
  return `the ${params.backend.kind} queue has no shared place to keep paused tasks: enable the "database" plugin so every process reads them from jfast_paused_tasks (jfast docs worker#pausing-a-task)`;
}
