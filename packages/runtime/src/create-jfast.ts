import type { Job } from "./core/job.js";
import { JobEvents, type JobEventListener, type JobEventName } from "./core/job-events.js";
import type { QueueBackend, TaskDepths } from "./core/queue-backend.js";
import { TaskRegistry } from "./core/registry.js";
import type { AppContext, JobMiddleware, TaskDefinition } from "./core/task.js";
import { loadConfig, type ConfigOverrides, type JfastConfig } from "./config/load-config.js";
import { withRequest, type RequestContext } from "./context/context.js";
import { createFetchHandler } from "./http/fetch-handler.js";
import { fastifyContextHook, honoContextMiddleware, koaContextMiddleware, nodeContextMiddleware, nodeRoutes } from "./http/middleware.js";
import { nestContextModule } from "./http/nest.js";
import { discoverModules } from "./modules/discover.js";
import { eventHandlersOf, type EventHandlerDefinition } from "./kafka/on.js";
import { createLogger, toLogger, type Logger, type PinoLogger } from "./observability/logger.js";
import { createMetrics } from "./observability/metrics.js";
import type { TelemetryOptions } from "./observability/telemetry.js";
import { databasePlugin } from "./plugins/database.js";
import { kafkaPlugin } from "./plugins/kafka.js";
import { outboxPlugin } from "./plugins/outbox.js";
import { createPluginRegistry } from "./plugins/plugin-registry.js";
import type { Providers } from "./core/providers.js";
import type { ServiceProviders } from "./plugins/providers.js";
import { queuePlugin } from "./plugins/queue.js";
import { relayPlugin } from "./plugins/relay.js";
import { schedulerPlugin } from "./plugins/scheduler.js";
import { telemetryPlugin } from "./plugins/telemetry.js";
import { schedulesOf } from "./scheduler/declare-schedule.js";
import { flowsOf } from "./core/define-flow.js";
import { createAppWorker, type AppWorkerOptions } from "./worker/app-worker.js";
import type { AdminService } from "./admin/create-admin.js";
import type { AdminRepairs } from "./admin/repairs.js";
import type { AppWorker } from "./worker/worker-group.js";

export interface CreateJfastOptions {
  /** The service root: where jfast.toml and modules/ live. */
  root: string;
  /** The service's own providers (a mailer, a storage client), declared in `Providers`, reachable through `require(name)`. */
  providers?: ServiceProviders;
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
  /**
   * Wraps every handler this app's workers run, the first outermost: `async (job, tools, next) => …`
   * (docs/tasks.md#middleware).
   */
  middleware?: readonly JobMiddleware[];
}

export interface Jfast {
  readonly config: JfastConfig;
  readonly logger: Logger;
  readonly tasks: TaskRegistry;
  /** Problems that did not stop start-up (task names not prefixed by their module). */
  readonly warnings: readonly string[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A started provider by name, typed by `Providers`; throws naming the plugin to enable. */
  require<K extends keyof Providers>(name: K): Providers[K];
  /** @deprecated the name alone gives the type: `require("queue")`; declare your own providers in `Providers`. */
  require<T>(name: keyof Providers): T;
  /** A Web Request → Response handler for GET /ready and GET /queue/stats; 404 for anything else. */
  fetch(request: Request): Promise<Response>;
  /** Express / node:http middleware serving the same routes. */
  routes(): ReturnType<typeof nodeRoutes>;
  /**
   * The admin API's repairs, run in this process as `actor` (`jfast jobs retry` passes `cli:<os user>`): the same
   * operations as the admin API's, each written to the audit trail (docs/admin-api.md#audit-trail).
   */
  repairs(actor: string): Promise<AdminRepairs>;
  /** Stores tenant, request id and trace for everything `fn` does (jobs built inside inherit them). */
  withRequest<T>(context: RequestContext, fn: () => T): T;
  /**
   * Request context (tenant, request id, trace) from the request's headers, one per framework
   * (docs/getting-started.md#your-web-framework). `node` is `express` under its older name.
   */
  middleware: {
    hono: typeof honoContextMiddleware;
    express: typeof nodeContextMiddleware;
    koa: typeof koaContextMiddleware;
    fastify: typeof fastifyContextHook;
    /** A Nest module (Express or Fastify underneath): `@Module({ imports: [jfast.middleware.nest()] })`. */
    nest: typeof nestContextModule;
    node: typeof nodeContextMiddleware;
  };
  /** Builds a worker for this app (what `jfast worker` runs). */
  createWorker(options?: AppWorkerOptions): AppWorker;
  /** The app context handlers receive as `ctx`. */
  readonly context: AppContext;
  /**
   * Listens to a job event of this process (docs/observability.md#job-events): `jfast.on("job:completed", ({ job, value }) => …)`.
   * Returns the function that removes the listener.
   */
  on<E extends JobEventName>(name: E, listener: JobEventListener<E>): () => void;
  off<E extends JobEventName>(name: E, listener: JobEventListener<E>): void;
}

/** The composition root: configuration, modules, then the plugins in the order their requirements give. */
export async function createJfast(options: CreateJfastOptions): Promise<Jfast> {
  const config = await loadConfig({ root: options.root, env: options.env ?? process.env, overrides: options.config });
  const logger = options.logger ? toLogger(options.logger) : createLogger({ service: config.service.name, level: config.logLevel });
  const registry = new TaskRegistry();
  const eventHandlers: EventHandlerDefinition[] = [];
  for (const module of await discoverModules(config.root)) {
    for (const definition of module.definitions) registry.register(definition);
    eventHandlers.push(...eventHandlersOf(module));
    for (const declared of schedulesOf(module)) registry.schedule(declared.task, declared.options);
    for (const flow of flowsOf(module)) registry.declareFlow(flow);
  }
  eventHandlers.push(...(options.handlers ?? []));
  for (const definition of options.tasks ?? []) registry.register(definition);
  for (const warning of registry.warnings) logger.warn(warning);

  const providers = new Map<string, unknown>([...Object.entries(options.providers ?? {}), ["tasks", registry]]);
  const events = new JobEvents((error, name) => logger.error("a job event listener failed", { event: name, error }));
  const plugins = createPluginRegistry({
    // Listed in the order their checks run; start-up order comes from each plugin's requires and after.
    plugins: [telemetryPlugin(), kafkaPlugin(), databasePlugin(), queuePlugin(), outboxPlugin(), schedulerPlugin(), relayPlugin()],
    setup: { config, logger, registry, eventHandlers, background: options.background !== false, backend: options.backend, telemetry: options.telemetry, events },
    providers,
  });
  const context: AppContext = { serviceName: config.service.name, logger, require: (name: string) => plugins.require(name) as never };
  const queue = () => plugins.get("queue")?.provider ?? null;
  const metrics = createMetrics({
    events,
    service: config.service.name,
    queue: config.queue?.name ?? "",
    sources: {
      backend: () => queue()?.backend.kind ?? null,
      depths: () => queue()?.depths() ?? null,
      depthsByTask: () => {
        const backend = queue()?.backend;
        return backend ? perTaskDepths(backend) : null;
      },
      tasks: () => registry.all().map((t) => t.name),
      outbox: () => plugins.get("outbox")?.health() ?? null,
      scheduler: () => plugins.get("scheduler")?.status() ?? null,
      events: () => plugins.get("kafka")?.health() ?? null,
      pruner: () => plugins.get("queue")?.pruner?.status() ?? null,
      queues: () => {
        const provider = queue();
        if (!provider || provider.queues.size === 1) return null;
        return [...provider.queues.values()].map((named) => ({
          label: named.backendName,
          depths: () => named.backend.depths(),
          depthsByTask: () => perTaskDepths(named.backend),
          tasks: registry.tasksIn(named.name).map((t) => t.name),
        }));
      },
    },
  });
  let admin: Promise<AdminService> | null = null;
  const adminService = (): Promise<AdminService> =>
    (admin ??= import("./admin/create-admin.js").then(({ createAdmin }) =>
      createAdmin({ config, registry, logger, running: plugins }),
    ));
  const fetchHandler = createFetchHandler({
    config,
    registry,
    running: plugins,
    metrics,
    admin: async (request) => {
      return (await adminService()).handle(request);
    },
  });
  const workers = new Set<AppWorker>();
  return {
    config,
    logger,
    tasks: registry,
    warnings: registry.warnings,
    context,
    start: () => plugins.start(context),
    async stop() {
      await Promise.all([...workers].map((w) => w.stop({ graceMs: 0 })));
      workers.clear();
      await plugins.stop();
    },
    require: (name: string) => plugins.require(name) as never,
    fetch: (request) => fetchHandler(request),
    routes: () => nodeRoutes((request) => fetchHandler(request)),
    repairs: async (actor) => (await adminService()).repairs(actor),
    withRequest,
    middleware: { hono: honoContextMiddleware, express: nodeContextMiddleware, koa: koaContextMiddleware, fastify: fastifyContextHook, nest: nestContextModule, node: nodeContextMiddleware },
    on: (name, listener) => events.on(name, listener),
    off: (name, listener) => events.off(name, listener),
    createWorker(workerOptions = {}) {
      const worker = createAppWorker({ config, registry, plugins, context, logger, events, middleware: options.middleware ?? [], options: workerOptions });
      workers.add(worker);
      return worker;
    },
  };
}

export type { Job };

/** A backend's depths per task, or null where it counts only totals (capabilities.perTaskDepths off: RabbitMQ). */
function perTaskDepths(backend: QueueBackend): Promise<TaskDepths | null> {
  return backend.capabilities.perTaskDepths ? backend.depthsByTask() : Promise.resolve(null);
}
