import { postgresQueue } from "../backends/postgres/config.js";
import { rabbitMqQueue } from "../backends/rabbitmq/config.js";
import { redisQueue } from "../backends/redis/config.js";
import type { JfastConfig } from "../config/load-config.js";
import { DEFAULT_QUEUE } from "../core/named-queue.js";
import { onAttemptEnded } from "../core/job-events.js";
import { FLOW_STORE_MISSING } from "../core/flow-store.js";
import { limitsOf } from "../core/limits.js";
import { checkDebouncedTasks } from "../queue/debounce-check.js";
import { resolveQueueFairness } from "../queue/queue-fairness.js";
import type { TaskRegistry } from "../core/registry.js";
import type { QueueControl } from "../queue/queue-control.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { Outbox } from "../outbox/outbox.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { ConfigError } from "../errors/jfast-error.js";
import { ENCRYPTION_DOCS, KEY_RECIPE } from "../core/crypto/keyring.js";
import type { Logger } from "../observability/logger.js";
import type { KafkaLagSource } from "../alerts/kafka-lag.js";
import type { EventHandlerDefinition } from "../kafka/on.js";
import type { NamedQueueConfig } from "../queue/config.js";
import type { Plugin, Running } from "./plugin.js";

/** `[plugin.queue]`: the backend the config names (or the one given to createJfast), paused tasks, throughput. */
export function queuePlugin(): Plugin<"queue"> {
  let running: Running["queue"] | null = null;
  let stopCounting: (() => void) | null = null;
  return {
    name: "queue",
    plugin: "queue",
    requires: [],
    // The PostgreSQL backend lives in the database (config/plugin-rules.ts refuses it without); pauses and throughput too.
    after: ["database", "telemetry"],
    provides: ["queue"],
    enabled: ({ config }) => config.queue !== null,
    check({ config, registry }) {
      checkEncryptionKeys(config, registry);
      if (config.queue) return checkTaskQueues(config, registry);
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
    async start({ config, logger, registry, backend: given, background, events, eventHandlers, get, provide }) {
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
      if (queueConfig.backend === "rabbitmq" && !given && !database) {
        refuseUniqueTasks(registry);
        refuseLimitedTasks(registry);
        refuseFlows(registry);
      }
      // A queue's fairness becomes its tasks' own option, before any limit is declared or job enqueued.
      resolveQueueFairness(registry, queueConfig.queues, queueConfig.backend);
      // With keys, every backend is seen through the encryption seam: sealed on the way in, opened at claim.
      const encryption = await openEncryption(config, registry);
      // One backend instance per named queue, over the same store (core/named-queue.ts); `default` first.
      const opened: { config: NamedQueueConfig; backend: QueueBackend; control: QueueControl }[] = [];
      try {
        for (const named of queueConfig.queues) {
          const built = named.name === DEFAULT_QUEUE && given ? given : await buildBackend(config, named, database, logger);
          const backend = encryption ? encryption.wrap(built, logger) : built;
          try {
            await backend.setup();
            // Each queue's limited tasks (docs/tasks.md#limits), declared before any claim.
            await backend.setLimits({ limits: limitsOf(registry.tasksIn(named.name)) });
            checkDebouncedTasks(registry.tasksIn(named.name), backend, named.name);
            opened.push({ config: named, backend, control: await openQueueControl({ backend, database, queue: named.backendName, logger }) });
          } catch (error) {
            await backend.close().catch(() => undefined);
            throw error;
          }
        }
      } catch (error) {
        // The queues opened so far close again: a failed start leaves no connection behind.
        for (const q of opened) {
          await q.control.close().catch(() => undefined);
          await q.backend.close().catch(() => undefined);
        }
        throw error;
      }
      const [{ backend, control }] = opened as [(typeof opened)[number], ...typeof opened];
      const untraced = createQueueProvider({
        backend,
        name: queueConfig.name,
        registry,
        defaultMaxAttempts: queueConfig.maxAttempts,
        maxPayloadBytes: queueConfig.maxPayloadBytes,
        pauses: control.pauses,
        throughput: control.throughput,
        foreignTasks,
        namedQueues: opened.slice(1).map((q) => ({
          name: q.config.name,
          backendName: q.config.backendName,
          backend: q.backend,
          pauses: q.control.pauses,
          throughput: q.control.throughput,
          maxAttempts: q.config.maxAttempts,
        })),
        events,
      });
      // Each queue's throughput history counts the attempts this process's workers end on it.
      const throughputs = new Map(opened.map((q) => [q.config.name, q.control.throughput]));
      const stopEnded = onAttemptEnded(events, (e, outcome) => throughputs.get(e.queue)?.finished(e.job, outcome, e.durationMs));
      // Each attempt's wait (due → started) goes into the same per-minute row (docs/observability.md#run-and-wait-time-history).
      const stopStarted = events.on("job:started", (e) => throughputs.get(e.queue)?.started(e.job));
      stopCounting = () => {
        stopEnded();
        stopStarted();
      };
      // Traced once, here: the scheduler, the outbox, the relay and services all enqueue through this one.
      const telemetry = get("telemetry");
      const provider = telemetry ? telemetry.traceQueue(untraced) : untraced;
      provide("queue", provider);
      const { createPruner } = await import("../queue/pruner.js");
      const pruner = background
        ? createPruner({
            queues: opened.map((q) => ({ label: q.config.backendName, backend: q.backend, retention: q.config.retention })),
            intervalMs: queueConfig.pruneIntervalMs,
            logger,
          })
        : null;
      const alerter = await startAlerter({ config, provider, database: get("database") ?? null, logger, background, outbox: () => get("outbox") ?? null, scheduler: () => get("scheduler") ?? null, registry, kafka: kafkaLagSource(config, eventHandlers) });
      running = { provider, control, controls: new Map(opened.map((q) => [q.config.name, q.control])), pruner, alerter };
      return running;
    },
    async stop() {
      stopCounting?.();
      stopCounting = null;
      await running?.pruner?.stop();
      await running?.alerter?.stop();
      for (const control of running?.controls.values() ?? []) await control.close();
      for (const queue of running?.provider.queues.values() ?? []) await queue.backend.close();
      running = null;
    },
  };
}

/**
 * The alerts evaluator over the service's store: the database where the service has one, else Redis beside the
 * Redis queue, else the process's memory for the memory queue. A RabbitMQ queue without the database has none: a
 * rule of jfast.toml stops start-up there, since it would never be evaluated.
 */
async function startAlerter(params: { config: JfastConfig; provider: QueueProvider; database: DatabaseProvider | null; logger: Logger; background: boolean; outbox: () => Outbox | null; scheduler: () => Scheduler | null; registry: TaskRegistry; kafka: KafkaLagSource | "off" | null }) {
  const { config, provider, database, logger } = params;
  const alerting = config.alerts;
  if (!alerting) return null;
  const outboxRule = alerting.rules.find((r) => r.rule === "outbox_lag");
  const scheduleRule = alerting.rules.find((r) => r.rule === "schedule_late");
  if (scheduleRule && params.background && config.queue?.scheduler !== true) {
    throw new ConfigError(`[[alerts]] "${scheduleRule.name}" watches the schedules, and the scheduler is off in this process`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: "set [plugin.queue] scheduler = true in jfast.toml, or remove the alert",
      docs: "jfast docs alerts#rules",
    });
  }
  if (outboxRule && !config.plugins.has("outbox")) {
    throw new ConfigError(`[[alerts]] "${outboxRule.name}" watches the outbox, and the outbox plugin is not enabled`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "outbox" to [plugins] enabled in jfast.toml, or remove the alert`,
      docs: "jfast docs alerts#rules",
    });
  }
  let store;
  if (database) {
    const { createSqlAlertStore } = await import("../alerts/sql-store.js");
    store = createSqlAlertStore({ db: database.sql });
  } else if (provider.backend.kind === "redis" && config.queue?.url) {
    const { createRedisAlertStore } = await import("../alerts/redis-store.js");
    store = createRedisAlertStore({ url: config.queue.url, cluster: config.queue.cluster, queue: config.queue.name });
  } else if (provider.backend.kind === "memory") {
    const { createMemoryAlertStore } = await import("../alerts/alert-store.js");
    store = createMemoryAlertStore();
  } else {
    if (alerting.rules.length > 0) {
      throw new ConfigError(`[[alerts]] "${alerting.rules[0]!.name}" needs a store every process shares, and the ${provider.backend.kind} queue gives none to alerts`, {
        code: "CONFIG_PLUGIN_MISSING",
        hint: `add "database" to [plugins] enabled (alerts are kept in jfast_alert_* tables), or remove the [[alerts]] entries`,
        docs: "jfast docs alerts#stores",
      });
    }
    return null;
  }
  const { promiseCheckerFor, promiseMissing } = await import("../alerts/promise-setup.js");
  const promises = await promiseCheckerFor({ config, registry: params.registry, queue: provider, outbox: params.outbox, logger, background: params.background }).catch(async (error: unknown) => {
    await store.close().catch(() => undefined);
    throw error;
  });
  const { createAlerter } = await import("../alerts/alerter.js");
  return createAlerter({ config: alerting, store, queue: provider, service: config.service, logger, timer: params.background, outbox: params.outbox, scheduler: params.scheduler, promises, promisesMissing: promiseMissing(config), kafka: params.kafka });
}

/** What kafka_lag rules watch: the service's group and the topics of its `on` handlers; "off" when Kafka is turned off here only. */
function kafkaLagSource(config: JfastConfig, handlers: readonly EventHandlerDefinition[]): KafkaLagSource | "off" | null {
  if (!config.kafka) return config.disabledPlugins.has("kafka") ? "off" : null;
  const { brokers, brokersFrom, consumerGroup, topicPrefix } = config.kafka;
  return { service: config.service.name, brokers: { brokers, from: brokersFrom }, consumerGroup, topicPrefix, topics: handlers.map((h) => h.topic) };
}

/** RabbitMQ holds no unique key itself: a task that needs one needs the database to hold it (docs/rabbitmq.md#unique-jobs). */
function refuseUniqueTasks(registry: TaskRegistry): void {
  const unique = registry.all().find((definition) => definition.options.unique !== undefined);
  if (!unique) return;
  throw new ConfigError(`task "${unique.name}" is unique, which the RabbitMQ queue enforces through the database, and the database plugin is not enabled`, {
    code: "CONFIG_PLUGIN_MISSING",
    hint: `add "database" to [plugins] enabled in jfast.toml (unique keys are held in jfast_unique_keys), or drop the task's unique option`,
    docs: "jfast docs rabbitmq#unique-jobs",
  });
}

/**
 * RabbitMQ counts nothing across processes itself: a task's concurrency or rate limit is held in the database
 * (jfast_task_limits, jfast_task_slots) (docs/rabbitmq.md#task-limits).
 */
function refuseLimitedTasks(registry: TaskRegistry): void {
  const limited = registry.all().find((definition) => definition.options.concurrency !== undefined || definition.options.rateLimit !== undefined);
  if (!limited) return;
  const option = limited.options.concurrency !== undefined ? "concurrency" : "rateLimit";
  throw new ConfigError(`task "${limited.name}" has a ${option} limit, which the RabbitMQ queue enforces across processes through the database, and the database plugin is not enabled`, {
    code: "CONFIG_PLUGIN_MISSING",
    hint: `add "database" to [plugins] enabled in jfast.toml (enabled = ["database", "queue", ...]; the limits are counted in jfast_task_limits and jfast_task_slots), or drop the task's ${option} option`,
    docs: "jfast docs rabbitmq#task-limits",
  });
}

/** RabbitMQ keeps flows in the service's database: a declared flow needs it (docs/rabbitmq.md#flows). */
function refuseFlows(registry: TaskRegistry): void {
  const [flow] = registry.flows();
  if (!flow) return;
  throw new ConfigError(`flow "${flow.name}" is declared (defineFlow), and the RabbitMQ queue keeps flows in the service's database, which is not enabled`, {
    code: "CONFIG_PLUGIN_MISSING",
    hint: FLOW_STORE_MISSING.hint,
    docs: "jfast docs rabbitmq#flows",
  });
}

/** A task with `encrypt: true` and no key to encrypt with stops start-up: its payloads would be stored in clear. */
function checkEncryptionKeys(config: JfastConfig, registry: TaskRegistry): void {
  if (config.encryption.keys.length > 0) return;
  const encrypted = registry.all().find((definition) => definition.options.encrypt === true);
  if (!encrypted) return;
  throw new ConfigError(`task "${encrypted.name}" is declared with encrypt: true, and JFAST_ENCRYPTION_KEYS holds no key`, {
    code: "ENCRYPTION_KEY_MISSING",
    hint: `set JFAST_ENCRYPTION_KEYS=<key id>:<base64 key>, e.g. k1:$(${KEY_RECIPE}), in every process of the service (the same keys everywhere)`,
    docs: ENCRYPTION_DOCS,
  });
}

/** The encryption seam when the service has keys; null otherwise (nothing to seal, and no cost at claim). */
async function openEncryption(config: JfastConfig, registry: TaskRegistry): Promise<{ wrap(backend: QueueBackend, logger: Logger): QueueBackend } | null> {
  if (config.encryption.keys.length === 0) return null;
  const [{ encryptionOf }, { withEncryption }] = await Promise.all([import("../encryption/job-encryption.js"), import("../encryption/encrypting-backend.js")]);
  const encryption = encryptionOf(config, registry)!;
  return { wrap: (backend, logger) => withEncryption(backend, encryption, logger) };
}

/**
 * Every task names a declared queue: a typo in `queue: "meda"` would otherwise put jobs where no worker runs
 * them. Caught at start-up, in the API and the worker alike.
 */
function checkTaskQueues(config: JfastConfig, registry: TaskRegistry): void {
  const declared = new Set(config.queue!.queues.map((q) => q.name));
  for (const task of registry.all()) {
    const queue = task.options.queue;
    if (queue === undefined || declared.has(queue)) continue;
    throw new ConfigError(`task "${task.name}" runs on queue "${queue}", which ${config.file} does not declare`, {
      code: "QUEUE_UNDECLARED",
      hint: `add [queues.${queue}] with concurrency = <n> to jfast.toml, or use one of its queues: ${[...declared].join(", ")}`,
      docs: "jfast docs queues#configuration",
    });
  }
}

/** The backend of one named queue, under the name the backend calls it (NamedQueueConfig.backendName). */
async function buildBackend(config: JfastConfig, named: NamedQueueConfig, database: DatabaseProvider | null, logger: Logger): Promise<QueueBackend> {
  // What the configuration decides is each backend's toOptions(); what the process opened (the database, the logger) is added here.
  const queue = config.queue!;
  switch (queue.backend) {
    case "memory": {
      const { createMemoryBackend } = await import("../backends/memory/memory-backend.js");
      return createMemoryBackend();
    }
    case "postgres": {
      const { createPostgresBackend } = await import("../backends/postgres/postgres-backend.js");
      // The heartbeat thread connects to the server on its own (docs/worker.md#a-blocked-event-loop-does-not-lose-the-lease); PGlite has no server.
      const connectionUrl = database!.driver === "pg" ? (config.database?.url ?? undefined) : undefined;
      return createPostgresBackend({
        ...postgresQueue.toOptions(queue, named),
        db: database!.sql,
        reader: database!.reader,
        schema: database!.schema,
        ...(connectionUrl ? { connectionUrl } : {}),
        logger,
      });
    }
    case "redis": {
      const { createRedisBackend } = await import("../backends/redis/redis-backend.js");
      return createRedisBackend({ ...redisQueue.toOptions(queue, named), logger });
    }
    case "rabbitmq": {
      const { createRabbitMqBackend } = await import("../backends/rabbitmq/rabbitmq-backend.js");
      // With the database, cancellations wait in jfast_cancelled_jobs for the message to arrive (docs/rabbitmq.md).
      const { createSqlCancelStore } = await import("../queue/cancel-stores.js");
      const { createSqlUniqueStore } = await import("../queue/unique-stores.js");
      const { createSqlLimitStore } = await import("../queue/limit-stores.js");
      const { createSqlFlowStore } = await import("../queue/flow-stores.js");
      const { createDatabaseWorkerStore } = await import("../queue/worker-stores.js");
      const options = rabbitMqQueue.toOptions(queue, { backendName: named.backendName, visibilityTimeoutMs: queue.visibilityTimeoutMs });
      // With the database, unique keys are held in jfast_unique_keys (docs/rabbitmq.md#unique-jobs).
      const stores = database
        ? {
            cancellations: createSqlCancelStore({ db: database.sql, queue: options.queue }),
            uniqueKeys: createSqlUniqueStore({ db: database.sql, queue: options.queue }),
            // Task limits are counted in jfast_task_limits and jfast_task_slots (docs/rabbitmq.md#task-limits).
            limits: createSqlLimitStore({ db: database.sql, queue: options.queue }),
            // Flows and batches in jfast_flows and jfast_flow_steps (docs/rabbitmq.md#flows).
            flows: createSqlFlowStore({ db: database.sql, queue: options.queue }),
            // Its workers register in jfast_workers (docs/worker.md#the-worker-registry).
            workers: createDatabaseWorkerStore({ db: database.sql, queue: options.queue }),
          }
        : {};
      return createRabbitMqBackend({ ...options, logger, ...stores });
    }
  }
}
