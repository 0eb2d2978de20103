import type { QueueBackend } from "../core/queue-backend.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { NotSupportedError } from "../errors/jfast-error.js";
import type { ThroughputStore } from "../core/throughput.js";
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
  /**
   * Counts the attempts this process's workers end on the queue, with their run time and wait (the queue plugin
   * feeds it from the job events); null where no store exists (RabbitMQ without the database plugin).
   */
  throughput: ThroughputRecorder | null;
  close(): Promise<void>;
}

/**
 * Picks where paused tasks live: the backend's own store when its claim reads one (Redis), else the database
 * when the plugin is on (any backend), else memory for the memory queue. Throughput goes where openStatsStore says.
 */
export async function openQueueControl(params: {
  backend: QueueBackend;
  database: Pick<DatabaseProvider, "sql"> | null;
  queue: string;
  logger: Logger;
}): Promise<QueueControl> {
  const { backend, database, queue, logger } = params;
  const store =
    (backend.capabilities.pauseStore ? backend.pauseStore() : null) ??
    (database ? createSqlPauseStore({ db: database.sql, queue }) : backend.kind === "memory" ? createMemoryPauseStore() : null);
  const pauses = store ? new PausedTasks({ store, logger }) : null;
  await pauses?.start();
  const throughputStore = statsStoreOrNull({ backend, database, queue });
  const throughput = throughputStore ? new ThroughputRecorder({ store: throughputStore, logger }) : null;
  throughput?.start();
  return {
    pauses,
    throughput,
    async close() {
      pauses?.stop();
      await throughput?.close();
    },
  };
}

/** Why pausing is refused on this service, for the admin API (null when it is supported). */
export function pauseUnsupportedReason(params: { backend: QueueBackend; pauses: PausedTasks | null }): string | null {
  if (params.pauses) return null;
  return `the ${params.backend.kind} queue has no shared place to keep paused tasks: enable the "database" plugin so every process reads them from jfast_paused_tasks (jfast docs worker#pausing-a-task)`;
}

export const STATS_DOCS = "jfast docs observability#run-and-wait-time-history";

/**
 * Where the queue's throughput, run-time and wait history lives, shared by every process of the service: the
 * database when the plugin is on (jfast_stats; any backend), else the backend's own store (Redis keys), else the
 * memory queue's process. A RabbitMQ queue without the database has no shared place: NOT_SUPPORTED.
 */
export function openStatsStore(params: { backend: QueueBackend; database: Pick<DatabaseProvider, "sql"> | null; queue: string }): ThroughputStore {
  const { backend, database, queue } = params;
  if (database) return createSqlThroughputStore({ db: database.sql, queue });
  if (backend.capabilities.throughputStore) return backend.throughputStore();
  if (backend.kind === "memory") return createMemoryThroughputStore();
  throw new NotSupportedError(`the ${backend.kind} queue has no shared place to keep throughput, run-time and wait history`, {
    hint: `enable the "database" plugin: every process then adds its minutes to jfast_stats`,
    docs: STATS_DOCS,
  });
}

function statsStoreOrNull(params: Parameters<typeof openStatsStore>[0]): ThroughputStore | null {
  try {
    return openStatsStore(params);
  } catch (error) {
    if (error instanceof NotSupportedError) return null;
    throw error;
  }
}
