import type { JfastConfig } from "../config/load-config.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { ConfigError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { Plugin, Running } from "./plugin.js";

/** `[plugin.queue]`: the backend the config names (or the one given to createJfast), paused tasks, throughput. */
export function queuePlugin(): Plugin<"queue"> {
  let running: Running["queue"] | null = null;
  return {
    name: "queue",
    plugin: "queue",
    requires: [],
    // The PostgreSQL backend lives in the database (load-config refuses it without); pauses and throughput too.
    after: ["database", "telemetry"],
    provides: ["queue"],
    enabled: ({ config }) => config.queue !== null,
    check({ config, registry }) {
      if (config.queue) return;
      const subscribers = registry.all().filter((t) => t.kind === "subscriber");
      if (subscribers.length > 0) {
        // Local events are delivered as jobs: without a queue a published event would reach nobody.
        throw new ConfigError(`subscriber "${subscribers[0]!.name}" needs the queue plugin: local events reach subscribers as jobs`, {
          code: "CONFIG_PLUGIN_MISSING",
          hint: `add "queue" to [plugins] enabled in jfast.toml (with "outbox" to publish inside your transactions)`,
          docs: "jfast docs events#subscribing",
        });
      }
      if (registry.all().length > 0) {
        throw new ConfigError(`this service declares tasks (${registry.names().slice(0, 3).join(", ")}) but the queue plugin is not enabled`, {
          code: "CONFIG_PLUGIN_MISSING",
          hint: `add "queue" to [plugins] enabled in jfast.toml`,
          docs: "jfast docs configuration",
        });
      }
    },
    async start({ config, logger, registry, backend: given, get, provide }) {
      const queueConfig = config.queue!;
      const [{ openQueueControl }, { createQueueProvider }, { loadContractsFile }] = await Promise.all([
        import("../queue/queue-control.js"),
        import("../queue/queue-provider.js"),
        import("../contracts/contracts-file.js"),
      ]);
      // Other services' tasks this one enqueues; any other name is refused at enqueue (TASK_UNKNOWN). A broken
      // contracts.toml is `jfast contracts check`'s to report: the service runs, refusing every foreign task.
      const contracts = await loadContractsFile(config.root).catch((error: unknown) => {
        logger.warn("contracts.toml cannot be read: enqueueing another service's task is refused until it is fixed", { error });
        return null;
      });
      const foreignTasks = new Set(Object.values(contracts?.services ?? {}).flatMap((s) => s.tasks));
      const database = get("database");
      const backend = given ?? (await buildBackend(config, database, logger));
      await backend.setup();
      const control = await openQueueControl({ backend, database, queue: queueConfig.name, logger });
      const provider = createQueueProvider({
        backend,
        name: queueConfig.name,
        registry,
        defaultMaxAttempts: queueConfig.maxAttempts,
        maxPayloadBytes: queueConfig.maxPayloadBytes,
        pauses: control.pauses,
        throughput: control.throughput,
        foreignTasks,
      });
      get("telemetry")?.instrumentQueue(provider);
      provide("queue", provider);
      running = { provider, control };
      return running;
    },
    async stop() {
      await running?.control.close();
      await running?.provider.backend.close();
      running = null;
    },
  };
}

async function buildBackend(config: JfastConfig, database: DatabaseProvider | null, logger: Logger): Promise<QueueBackend> {
  const queue = config.queue!;
  switch (queue.backend) {
    case "memory": {
      const { createMemoryBackend } = await import("../backends/memory/memory-backend.js");
      return createMemoryBackend();
    }
    case "postgres": {
      const { createPostgresBackend } = await import("../backends/postgres/postgres-backend.js");
      return createPostgresBackend({ db: database!.sql, schema: database!.schema, queue: queue.name, keepCompleted: queue.keepCompleted, logger });
    }
    case "redis": {
      // load-config refuses backend = "redis" without a url (REDIS_URL or [plugin.queue] url).
      const { createRedisBackend } = await import("../backends/redis/redis-backend.js");
      return createRedisBackend({
        url: queue.url!,
        queue: queue.name,
        cluster: queue.cluster,
        waitReplicas: queue.waitReplicas,
        waitTimeoutMs: queue.waitTimeoutMs,
        ...(queue.keepCompleted ? {} : { completedRetentionMs: 0 }),
        logger,
      });
    }
    case "rabbitmq": {
      // load-config refuses backend = "rabbitmq" without a url (AMQP_URL or [plugin.queue] url). The broker drops
      // a silent connection after two heartbeats, so half the visibility timeout makes a vanished host's jobs
      // come back within about that timeout.
      const { createRabbitMqBackend } = await import("../backends/rabbitmq/rabbitmq-backend.js");
      const heartbeatSeconds = Math.min(60, Math.max(5, Math.ceil(queue.visibilityTimeoutMs / 2000)));
      // With the database, cancellations wait in jfast_cancelled_jobs for the message to arrive (docs/rabbitmq.md).
      const { createSqlCancelStore } = await import("../queue/cancel-stores.js");
      const cancellations = database ? { cancellations: createSqlCancelStore({ db: database.sql, queue: queue.name }) } : {};
      return createRabbitMqBackend({ url: queue.url!, queue: queue.name, queueType: queue.queueType, heartbeatSeconds, logger, ...cancellations });
    }
    default:
      throw new ConfigError(`[plugin.queue] backend = "${queue.backend}" is not available in this build`, {
        code: "BACKEND_UNAVAILABLE",
        hint: `use backend = "postgres" or "memory"`,
        docs: "jfast docs configuration#pluginqueue",
      });
  }
}
