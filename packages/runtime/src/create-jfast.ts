import type { Job } from "./core/job.js";
import type { QueueBackend } from "./core/queue-backend.js";
import { TaskRegistry } from "./core/registry.js";
import type { AppContext, TaskDefinition } from "./core/task.js";
import { loadConfig, type ConfigOverrides, type JfastConfig } from "./config/load-config.js";
import type { PluginName } from "./config/schema.js";
import { withRequest, type RequestContext } from "./context/context.js";
import type { DatabaseProvider } from "./database/database-provider.js";
import { ConfigError, JfastError } from "./errors/jfast-error.js";
import { createFetchHandler } from "./http/fetch-handler.js";
import { honoContextMiddleware, nodeContextMiddleware, nodeRoutes } from "./http/middleware.js";
import { discoverModules } from "./modules/discover.js";
import type { KafkaBus } from "./kafka/kafka-bus.js";
import { eventHandlersOf, type EventHandlerDefinition } from "./kafka/on.js";
import { createLogger, toLogger, type Logger, type PinoLogger } from "./observability/logger.js";
import { createMetrics } from "./observability/metrics.js";
import { createTelemetry, type TelemetryOptions } from "./observability/telemetry.js";
import { outboxChannel } from "./outbox/channel.js";
import { createOutbox, type Outbox } from "./outbox/outbox.js";
import { createOutboxEventBus } from "./outbox/outbox-event-bus.js";
import type { OutboxRelay } from "./outbox/relay.js";
import { createQueueProvider, type QueueProvider } from "./queue/queue-provider.js";
import { openQueueControl, type QueueControl } from "./queue/queue-control.js";
import { schedulesOf } from "./scheduler/declare-schedule.js";
import { collectSchedules } from "./scheduler/schedule.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import { createTaskExecutor } from "./worker/execute-task.js";
import { Worker } from "./worker/worker.js";

export interface CreateJfastOptions {
  /** The service root: where jfast.toml and modules/ live. */
  root: string;
  /** The service's own providers (a mailer, a storage client), reachable through `require(name)`. */
  providers?: Record<string, unknown>;
  /** Tasks declared outside modules/ (tests, generated code). */
  tasks?: TaskDefinition[];
  /** Kafka `on(...)` handlers declared outside modules/ (tests, generated code). */
  handlers?: EventHandlerDefinition[];
  /** Values set on top of jfast.toml, validated by the same schema (tests use this for isolated namespaces). */
  config?: ConfigOverrides;
  /** Environment to read URLs and PORT from (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Use this backend instead of building one from configuration. */
  backend?: QueueBackend;
  /**
   * Where jfast logs, instead of JSON lines on stderr: the service's own pino logger as it is (pino's
   * `(fields, message)` order is recognised), or any `Logger`.
   */
  logger?: Logger | PinoLogger;
  /** Telemetry hooks for programs and tests (a span exporter); jfast.toml's [plugin.telemetry] sets the OTLP endpoint. */
  telemetry?: TelemetryOptions;
  /**
   * Run the service's background machinery at start(): Kafka consumers of its `on` handlers, the scheduler,
   * the outbox relay (default true). Tools that only inspect or repair (`jfast jobs …`, `jfast outbox …`) pass
   * false: they use the database, the queue and the producer without joining the service's consumer group,
   * claiming ticks or delivering outbox rows. See docs/embedding.md.
   */
  background?: boolean;
}

export interface Jfast {
  readonly config: JfastConfig;
  readonly logger: Logger;
  readonly tasks: TaskRegistry;
  /** Problems that did not stop start-up (task names not prefixed by their module). */
  readonly warnings: readonly string[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A started provider by name; throws naming the plugin to enable. */
  require<T = any>(name: string): T;
  /** A Web Request → Response handler for GET /ready and GET /queue/stats; 404 for anything else. */
  fetch(request: Request): Promise<Response>;
  /** Express / node:http middleware serving the same routes. */
  routes(): ReturnType<typeof nodeRoutes>;
  /** Stores tenant, request id and trace for everything `fn` does (jobs built inside inherit them). */
  withRequest<T>(context: RequestContext, fn: () => T): T;
  middleware: { hono: typeof honoContextMiddleware; node: typeof nodeContextMiddleware };
  /** Builds a worker for this app (what `jfast worker` runs). */
  createWorker(options?: { concurrency?: number; workerId?: string; prefetch?: number }): Worker;
  /** The app context handlers receive as `ctx`. */
  readonly context: AppContext;
}

export async function createJfast(options: CreateJfastOptions): Promise<Jfast> {
  const config = await loadConfig({ root: options.root, env: options.env ?? process.env, overrides: options.config });
  const logger = options.logger ? toLogger(options.logger) : createLogger({ service: config.service.name, level: config.logLevel });
  const registry = new TaskRegistry();

  const eventHandlers: EventHandlerDefinition[] = [];
  for (const module of await discoverModules(config.root)) {
    for (const definition of module.definitions) registry.register(definition);
    eventHandlers.push(...eventHandlersOf(module));
    for (const declared of schedulesOf(module)) registry.schedule(declared.task, declared.options);
  }
  eventHandlers.push(...(options.handlers ?? []));
  if (eventHandlers.length > 0 && !config.events && config.disabledPlugins.has("events")) {
    // Turned off for this process on purpose (a machine without Kafka): the service runs, its handlers wait.
    logger.warn(`the events plugin is off (JFAST_DISABLE_PLUGINS): ${eventHandlers.length} on(...) handler(s) consume nothing in this process`, {
      topics: [...new Set(eventHandlers.map((h) => h.topic))],
      docs: "docs/kafka.md#turning-kafka-off",
    });
    eventHandlers.length = 0;
  }
  if (eventHandlers.length > 0 && !config.events) {
    throw new ConfigError(`on("${eventHandlers[0]!.topic}") handlers need the events plugin (Kafka)`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "events" to [plugins] enabled in jfast.toml and set [plugin.events] bootstrap_servers (or KAFKA_BROKERS)`,
      docs: "docs/kafka.md",
    });
  }
  for (const definition of options.tasks ?? []) registry.register(definition);

  const sessionTasks = registry.all().filter((t) => t.options.session);
  if (sessionTasks.length > 0 && !config.database) {
    throw new ConfigError(
      `task "${sessionTasks[0]!.name}" asks for a session (session: true) but the database plugin is not enabled`,
      {
        code: "CONFIG_PLUGIN_MISSING",
        hint: `add "database" to [plugins] enabled in jfast.toml (with no url it runs embedded), or remove session: true`,
        docs: "docs/tasks.md#task-sessions",
      },
    );
  }
  const subscribers = registry.all().filter((t) => t.kind === "subscriber");
  if (subscribers.length > 0 && !config.queue) {
    // Local events are delivered as jobs: without a queue a published event would reach nobody.
    throw new ConfigError(`subscriber "${subscribers[0]!.name}" needs the queue plugin: local events reach subscribers as jobs`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "queue" to [plugins] enabled in jfast.toml (with "outbox" to publish inside your transactions)`,
      docs: "docs/events.md#subscribers",
    });
  }
  if (registry.all().length > 0 && !config.queue) {
    throw new ConfigError(`this service declares tasks (${registry.names().slice(0, 3).join(", ")}) but the queue plugin is not enabled`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "queue" to [plugins] enabled in jfast.toml`,
      docs: "docs/configuration.md",
    });
  }
  for (const warning of registry.warnings) logger.warn(warning);
  // A bad cron or zone in task options stops start-up here; tasks.schedule(...) added later is checked at start().
  const declaredSchedules = collectSchedules(registry, { requireTasks: false });
  if (declaredSchedules.length > 0 && !config.queue?.scheduler) {
    logger.warn("tasks declare schedules but the scheduler is off in this process; they fire only where [plugin.queue] scheduler = true", {
      schedules: declaredSchedules.map((s) => s.name),
    });
  }

  const providers = new Map<string, unknown>(Object.entries(options.providers ?? {}));
  let database: DatabaseProvider | null = null;
  let queue: QueueProvider | null = null;
  let outbox: Outbox | null = null;
  let relay: OutboxRelay | null = null;
  let events: KafkaBus | null = null;
  let scheduler: Scheduler | null = null;
  let control: QueueControl | null = null;
  let started = false;
  const workers = new Set<Worker>();

  const context: AppContext = {
    serviceName: config.service.name,
    logger,
    require<T>(name: string): T {
      return requireProvider(name) as T;
    },
  };

  function requireProvider(name: string): unknown {
    if (providers.has(name)) return providers.get(name);
    const plugin = PROVIDER_PLUGIN[name];
    if (plugin && !config.plugins.has(plugin)) {
      throw new ConfigError(`"${name}" is provided by the ${plugin} plugin, which is not enabled`, {
        code: "PROVIDER_UNAVAILABLE",
        hint: `add "${plugin}" to [plugins] enabled in jfast.toml`,
        docs: "docs/configuration.md#plugins",
      });
    }
    if (name === "scheduler" && config.queue && !config.queue.scheduler) {
      throw new ConfigError(`"scheduler" runs only where it is turned on`, {
        code: "PROVIDER_UNAVAILABLE",
        hint: "set [plugin.queue] scheduler = true in jfast.toml",
        docs: "docs/scheduler.md",
      });
    }
    if (plugin && !started) {
      throw new JfastError(`"${name}" is not available before jfast.start()`, {
        code: "NOT_STARTED",
        hint: "await jfast.start() before using providers",
        docs: "docs/embedding.md",
      });
    }
    throw new JfastError(`no provider named "${name}"`, {
      code: "PROVIDER_UNKNOWN",
      hint: `known providers: ${[...providers.keys()].join(", ") || "(none)"}; register your own with createJfast({ providers: { ${name}: ... } })`,
      docs: "docs/embedding.md#providers",
    });
  }
  providers.set("tasks", registry);

  const telemetry = config.plugins.has("telemetry")
    ? await createTelemetry({
        serviceName: config.raw.plugin.telemetry?.service_name ?? config.service.name,
        endpoint: config.raw.plugin.telemetry?.endpoint,
        options: options.telemetry,
      })
    : null;
  const executeAttempt = createTaskExecutor({ context, database: () => database, logger });
  const execute = telemetry ? telemetry.wrapExecute(executeAttempt, config.queue?.name ?? "jfast.jobs") : executeAttempt;
  const metrics = createMetrics({
    service: config.service.name,
    queue: config.queue?.name ?? "",
    sources: {
      backend: () => queue?.backend.kind ?? null,
      depths: () => queue?.depths() ?? null,
      depthsByTask: () => queue?.backend.depthsByTask() ?? null,
      tasks: () => registry.all().map((t) => t.name),
      outbox: () => outbox?.health() ?? null,
      scheduler: () => scheduler?.status() ?? null,
      events: () => events?.health() ?? null,
    },
  });

  const background = options.background !== false;
  const jfast: Jfast = {
    config,
    logger,
    tasks: registry,
    warnings: registry.warnings,
    context,
    async start() {
      if (started) return;
      // Before any connection opens: a schedule of an unknown task stops start-up with nothing to clean up.
      if (config.queue?.scheduler) collectSchedules(registry, { requireTasks: true });
      if (config.database) {
        const { openDatabase } = await import("./database/open-database.js");
        database = await openDatabase({ config: config.database, root: config.root, logger });
        providers.set("database", database);
      }
      if (config.queue) {
        const backend = options.backend ?? (await buildBackend(config, database, logger));
        await backend.setup();
        control = await openQueueControl({ backend, database, queue: config.queue.name, logger });
        queue = createQueueProvider({
          backend,
          name: config.queue.name,
          registry,
          defaultMaxAttempts: config.queue.maxAttempts,
          maxPayloadBytes: config.queue.maxPayloadBytes,
          pauses: control.pauses,
          throughput: control.throughput,
        });
        telemetry?.instrumentQueue(queue);
        providers.set("queue", queue);
      }
      if (config.outbox) {
        // With Kafka on, outbox.publish also writes the event as an outbox row the relay produces to its topic.
        const bus = config.events ? createOutboxEventBus({ maxAttempts: config.outbox.maxAttempts, channel: outboxChannel(database!.schema) }) : null;
        outbox = createOutbox({ database: database!, queue, config, logger, registry, bus: () => bus, relay: () => relay });
        telemetry?.instrumentOutbox(outbox, queue?.name ?? null);
        providers.set("outbox", outbox);
      }
      if (config.events) {
        // kafkajs is loaded only by services that enable the events plugin.
        const { createKafkaBus } = await import("./kafka/kafka-bus.js");
        events = await createKafkaBus({
          service: config.service.name,
          brokers: { brokers: config.events.brokers, from: config.events.brokersFrom },
          consumerGroup: config.events.consumerGroup,
          topicPrefix: config.events.topicPrefix,
          handlers: !background
            ? []
            : telemetry
              ? eventHandlers.map((h) => telemetry.wrapEventHandler(h, { consumerGroup: config.events!.consumerGroup }))
              : eventHandlers,
          context,
          logger,
        });
        // Services publish through a traced bus; the relay and the health checks use the plain one.
        providers.set("events", telemetry ? telemetry.instrumentEvents(events) : events);
      }
      if (background && config.queue?.scheduler && queue) {
        const { startScheduler } = await import("./scheduler/start-scheduler.js");
        scheduler = await startScheduler({ config, registry, queue, database, logger });
        providers.set("scheduler", scheduler);
      }
      if (outbox && background) {
        // Last: it delivers to the queue and the event bus, so both must be up. Runs in every process.
        const { startOutboxRelay } = await import("./outbox/start-relay.js");
        relay = await startOutboxRelay({ database: database!, config, logger, queue: () => queue, events: () => events });
      }
      started = true;
    },
    async stop() {
      // Before the queue and the bus close under a send; rows in flight are given back.
      await relay?.stop();
      relay = null;
      // First, so no tick is claimed against a queue that is closing.
      await scheduler?.stop();
      await scheduler?.store.close();
      scheduler = null;
      await Promise.all([...workers].map((w) => w.stop({ graceMs: 0 })));
      workers.clear();
      await events?.close();
      events = null;
      await control?.close();
      control = null;
      await queue?.backend.close();
      await database?.close();
      for (const name of ["queue", "outbox", "database", "events", "scheduler"]) providers.delete(name);
      queue = null;
      database = null;
      outbox = null;
      started = false;
      await telemetry?.flush();
    },
    require: <T>(name: string) => requireProvider(name) as T,
    fetch: (request) => fetchHandler(request),
    routes: () => nodeRoutes((request) => fetchHandler(request)),
    withRequest,
    middleware: { hono: honoContextMiddleware, node: nodeContextMiddleware },
    createWorker(workerOptions = {}) {
      if (!queue || !config.queue) {
        throw new JfastError("a worker needs the queue plugin, started", {
          code: "NOT_STARTED",
          hint: `enable "queue" in jfast.toml and await jfast.start() first`,
          docs: "docs/worker.md",
        });
      }
      const worker = new Worker({
        backend: queue.backend,
        lookup: (name) => registry.get(name),
        execute,
        logger,
        concurrency: workerOptions.concurrency ?? config.queue.concurrency,
        // Claims go in batches sized to the rate jobs finish at, unless a fixed prefetch is given (here, else
        // [plugin.queue] prefetch); a backend whose broker pushes ahead (RabbitMQ) gets no buffer either way.
        ...fixedPrefetch(workerOptions.prefetch ?? config.queue.prefetch),
        leaseMs: config.queue.visibilityTimeoutMs,
        backoffBaseMs: config.queue.backoffBaseMs,
        pollIntervalMs: config.queue.pollIntervalMs,
        defaultMaxAttempts: config.queue.maxAttempts,
        maxSnoozes: config.queue.maxSnoozes,
        observer: control?.observe(metrics) ?? metrics,
        ...(queue.pauses ? { paused: queue.pauses } : {}),
        ...(workerOptions.workerId ? { workerId: workerOptions.workerId } : {}),
      });
      workers.add(worker);
      return worker;
    },
  };

  let admin: Promise<(request: Request) => Promise<Response>> | null = null;
  const fetchHandler = createFetchHandler({
    config,
    registry,
    queue: () => queue,
    outbox: () => outbox,
    events: () => events,
    scheduler: () => scheduler,
    metrics,
    admin: async (request) => {
      admin ??= import("./admin/create-admin.js").then(({ createAdmin }) =>
        createAdmin({ config, registry, logger, queue: () => queue, outbox: () => outbox, provider: (name) => providers.get(name) }),
      );
      return (await admin)(request);
    },
  });

  return jfast;
}

/** Which plugin provides each built-in provider. */
const PROVIDER_PLUGIN: Record<string, PluginName> = {
  queue: "queue",
  outbox: "outbox",
  database: "database",
  events: "events",
  scheduler: "queue",
};

async function buildBackend(config: JfastConfig, database: DatabaseProvider | null, logger: Logger): Promise<QueueBackend> {
  const queue = config.queue!;
  switch (queue.backend) {
    case "memory": {
      const { createMemoryBackend } = await import("./backends/memory/memory-backend.js");
      return createMemoryBackend();
    }
    case "postgres": {
      const { createPostgresBackend } = await import("./backends/postgres/postgres-backend.js");
      return createPostgresBackend({ db: database!.sql, schema: database!.schema, queue: queue.name, keepCompleted: queue.keepCompleted, logger });
    }
    case "redis": {
      // load-config refuses backend = "redis" without a url (REDIS_URL or [plugin.queue] url).
      const { createRedisBackend } = await import("./backends/redis/redis-backend.js");
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
      const { createRabbitMqBackend } = await import("./backends/rabbitmq/rabbitmq-backend.js");
      const heartbeatSeconds = Math.min(60, Math.max(5, Math.ceil(queue.visibilityTimeoutMs / 2000)));
      // With the database, cancellations wait in jfast_cancelled_jobs for the message to arrive (docs/rabbitmq.md).
      const { createSqlCancelStore } = await import("./queue/cancel-stores.js");
      const cancellations = database ? { cancellations: createSqlCancelStore({ db: database.sql, queue: queue.name }) } : {};
      return createRabbitMqBackend({ url: queue.url!, queue: queue.name, heartbeatSeconds, logger, ...cancellations });
    }
    default:
      throw new ConfigError(`[plugin.queue] backend = "${queue.backend}" is not available in this build`, {
        code: "BACKEND_UNAVAILABLE",
        hint: `use backend = "postgres" or "memory"`,
        docs: "docs/configuration.md#plugin-queue",
      });
  }
  void logger;
}

export type { Job };

/** A fixed worker prefetch, or nothing for the adaptive one. */
function fixedPrefetch(prefetch: number | null | undefined): { prefetch?: number } {
  return prefetch === null || prefetch === undefined ? {} : { prefetch };
}
