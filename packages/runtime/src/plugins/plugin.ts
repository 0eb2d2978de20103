import type { JfastConfig } from "../config/load-config.js";
import type { PluginName } from "../config/schema.js";
import type { JobEvents } from "../core/job-events.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { TaskRegistry } from "../core/registry.js";
import type { AppContext } from "../core/task.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import type { KafkaBus } from "../kafka/kafka-bus.js";
import type { EventHandlerDefinition } from "../kafka/on.js";
import type { Logger } from "../observability/logger.js";
import type { Telemetry, TelemetryOptions } from "../observability/telemetry.js";
import type { Outbox } from "../outbox/outbox.js";
import type { OutboxRelay } from "../outbox/relay.js";
import type { QueueControl } from "../queue/queue-control.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { Pruner } from "../queue/pruner.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { Alerter } from "../alerts/alerter.js";
import type { BuiltInProviders } from "./providers.js";

/** What each plugin holds while started, read by the plugins after it and by the app (workers, health, metrics). */
export interface Running {
  /** null when neither an OTLP endpoint nor a span exporter is given: no tracer is built. */
  telemetry: Telemetry | null;
  database: DatabaseProvider;
  /**
   * `control` is the default queue's; `controls` every named queue's, by name (docs/queues.md). `pruner`: null in a
   * process that runs no background machinery (docs/queues.md#retention).
   */
  queue: {
    provider: QueueProvider;
    control: QueueControl;
    controls: ReadonlyMap<string, QueueControl>;
    pruner: Pruner | null;
    /** The alerts evaluator (docs/alerts.md); null where no store every process shares can keep alerts. */
    alerter?: Alerter | null;
  };
  outbox: Outbox;
  /** The plain bus: the relay and the health checks use it; services get the traced one as `require("events")`. */
  kafka: KafkaBus;
  scheduler: Scheduler;
  relay: OutboxRelay;
}

export type PluginId = keyof Running;

/**
 * What is running, by plugin, typed: what the composition root hands the admin API, /ready and /metrics, and
 * plugins each other. null when the plugin is not enabled or not started (yet).
 */
export interface RunningPlugins {
  get<N extends PluginId>(name: N): Running[N] | null;
}

/** The app as plugins see it before anything starts: configuration, the registry, what createJfast was given. */
export interface PluginSetup {
  readonly config: JfastConfig;
  readonly logger: Logger;
  readonly registry: TaskRegistry;
  /** The `on(...)` handlers found in modules and given to createJfast; a plugin may empty it (events off). */
  readonly eventHandlers: EventHandlerDefinition[];
  /** Run the background machinery (consumers, scheduler, relay); false for tools that only inspect. */
  readonly background: boolean;
  readonly backend: QueueBackend | undefined;
  readonly telemetry: TelemetryOptions | undefined;
  /** The app's job events (core/job-events.ts): a plugin announces what it does there, or listens. */
  readonly events: JobEvents;
}

export interface PluginContext extends PluginSetup, RunningPlugins {
  /** The context handlers receive as `ctx`. */
  readonly app: AppContext;
  /** Makes a provider reachable through `require(name)`; withdrawn when this plugin stops. */
  provide<K extends keyof BuiltInProviders>(name: K, value: BuiltInProviders[K]): void;
}

/**
 * A plugin: what it needs, what it offers, and how it starts and stops. Made fresh for each app (its state
 * lives in the closure), started in an order that puts every plugin after those it requires or follows.
 */
export interface Plugin<N extends PluginId = PluginId> {
  readonly name: N;
  /** The `[plugins] enabled` entry that turns it on (named in errors about its providers). */
  readonly plugin: PluginName;
  /** Plugins that must be enabled and started first; a missing one stops start-up. */
  readonly requires: readonly PluginId[];
  /** Plugins started first when they are enabled (it uses them if present). */
  readonly after: readonly PluginId[];
  /** Providers it makes reachable through `require(name)` once started. */
  readonly provides: readonly (keyof BuiltInProviders)[];
  enabled(setup: PluginSetup): boolean;
  /**
   * Runs when the app is built, whether the plugin is enabled or not: what the registry or the configuration
   * asks of this plugin that it cannot give stops start-up here (CONFIG_PLUGIN_MISSING), before any connection.
   */
  check?(setup: PluginSetup): void;
  /** Runs at every start(), enabled or not, before any plugin starts: a problem found here leaves nothing to clean up. */
  beforeStart?(setup: PluginSetup): void;
  /** Imports its drivers and opens what it needs. */
  start(context: PluginContext): Promise<Running[N]>;
  stop(): Promise<void>;
  /** Why its providers are unavailable although its `[plugins]` entry is on (null: they are not). */
  unavailable?(config: JfastConfig, provider: keyof BuiltInProviders): Error | null;
}
