import type { Event } from "../core/event.js";
import type { Job } from "../core/job.js";
import type { SqlExecutor } from "../core/sql-port.js";
import type { TaskRegistry } from "../core/registry.js";
import type { JfastConfig } from "../config/load-config.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { publishLocal, type OutboxEventBus, type PublishResult } from "../events/publish-local.js";
import { NotSupportedError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { QueueProvider } from "../queue/queue-provider.js";

/** A backend that can write jobs inside a caller's SQL transaction (the PostgreSQL queue in the same database). */
export interface TransactionalEnqueue {
  enqueueWithin(params: { executor: SqlExecutor; jobs: Job[] }): Promise<{ inserted: string[] }>;
}

export function supportsTransactionalEnqueue(backend: unknown): backend is TransactionalEnqueue {
  return typeof (backend as Partial<TransactionalEnqueue>)?.enqueueWithin === "function";
}

/** `jfast.require("outbox")`: writes that exist iff the caller's transaction commits. */
export interface Outbox {
  enqueue(session: unknown, job: Job | Job[]): Promise<{ inserted: string[] }>;
  /** One job per local subscriber of the event's type (and the bus, when on), in the caller's transaction. */
  publish(session: unknown, topic: string, event: Event): Promise<PublishResult>;
  health(): Promise<{ status: "ok" | "degraded" | "unavailable"; [key: string]: unknown }>;
}

export function createOutbox(params: {
  database: DatabaseProvider;
  queue: QueueProvider | null;
  config: JfastConfig;
  logger: Logger;
  registry: TaskRegistry;
  /** The events plugin, when on: the event also goes to its topic for other services. */
  bus?: () => OutboxEventBus | null;
}): Outbox {
  const { database, queue } = params;
  const outbox: Outbox = {
    async enqueue(session, job) {
      if (!queue) {
        throw new NotSupportedError("outbox.enqueue needs the queue plugin", {
          hint: `add "queue" to [plugins] enabled in jfast.toml`,
          docs: "docs/outbox.md",
        });
      }
      const jobs = (Array.isArray(job) ? job : [job]).map(queue.prepare);
      const executor = database.executorFor(session);
      if (supportsTransactionalEnqueue(queue.backend)) {
        // Same database: the job row itself is written in the caller's transaction.
        return queue.backend.enqueueWithin({ executor, jobs });
      }
      throw new NotSupportedError(`outbox.enqueue to the ${queue.backend.kind} queue needs the outbox relay`, {
        hint: `use backend = "postgres" in [plugin.queue] for now`,
        docs: "docs/outbox.md",
      });
    },
    publish(session, topic, event) {
      return publishLocal({
        service: params.config.service.name,
        definitions: params.registry.all(),
        bus: params.bus?.() ?? null,
        // Same path as outbox.enqueue: straight into jfast_jobs on the PostgreSQL queue, the relay otherwise.
        enqueue: (s, jobs) => outbox.enqueue(s, jobs),
        executor: (s) => database.executorFor(s),
        session,
        topic,
        event,
      });
    },
    async health() {
      return { status: "ok" };
    },
  };
  return outbox;
}
