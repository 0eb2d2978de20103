import type { QueueBackend } from "../core/queue-backend.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import type { Logger } from "../observability/logger.js";
import { createMemoryPauseStore, createSqlPauseStore } from "./pause-stores.js";
import { PausedTasks } from "./paused-tasks.js";

/** What the service keeps next to its queue for operators: paused tasks. Opened at start, closed at stop. */
export interface QueueControl {
  /** null where no shared store exists (RabbitMQ without the database plugin): pausing is refused. */
  pauses: PausedTasks | null;
  close(): Promise<void>;
}

/**
 * Picks where paused tasks live: the backend's own store when its claim reads one (Redis), else the database
 * when the plugin is on (any backend), else memory for the memory queue.
 */
export async function openQueueControl(params: {
  backend: QueueBackend;
  database: DatabaseProvider | null;
  queue: string;
  logger: Logger;
}): Promise<QueueControl> {
  const { backend, database, queue, logger } = params;
  const store =
    backend.pauseStore() ??
    (database ? createSqlPauseStore({ db: database.sql, queue }) : backend.kind === "memory" ? createMemoryPauseStore() : null);
  const pauses = store ? new PausedTasks({ store, logger }) : null;
  await pauses?.start();
  return {
    pauses,
    async close() {
      pauses?.stop();
    },
  };
}

/** Why pausing is refused on this service, for the admin API (null when it is supported). */
export function pauseUnsupportedReason(params: { backend: QueueBackend; pauses: PausedTasks | null }): string | null {
  if (params.pauses) return null;
  return `the ${params.backend.kind} queue has no shared place to keep paused tasks: enable the "database" plugin so every process reads them from jfast_paused_tasks (docs/worker.md#pausing-a-task)`;
}
