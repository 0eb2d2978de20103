import type { JfastConfig } from "../config/load-config.js";
import type { AppContext } from "../core/task.js";
import { ConfigError, JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import { orderPlugins } from "./order-plugins.js";
import type { Plugin, PluginId, PluginSetup, Running, RunningPlugins } from "./plugin.js";
import type { BuiltInProviders } from "./providers.js";

/** The plugins of one app, started in order and stopped in reverse, and the providers they offer by name. */
export interface PluginRegistry extends RunningPlugins {
  readonly started: boolean;
  /** A provider by name, from the service's own, `tasks` and the started plugins'; throws naming the fix. */
  require(name: string): unknown;
  start(app: AppContext): Promise<void>;
  stop(): Promise<void>;
}

export function createPluginRegistry(params: {
  plugins: readonly Plugin[];
  setup: PluginSetup;
  /** The service's own providers and `tasks`: reachable before start() and after stop(). */
  providers: Map<string, unknown>;
}): PluginRegistry {
  const { plugins, setup, providers } = params;
  const { config, logger } = setup;
  for (const plugin of plugins) plugin.check?.(setup);
  const running = new Map<PluginId, unknown>();
  let started: Plugin[] = [];
  let ready = false;

  const get = <N extends PluginId>(name: N) => (running.get(name) as Running[N] | undefined) ?? null;
  const provide = <K extends keyof BuiltInProviders>(name: K, value: BuiltInProviders[K]) => void providers.set(name, value);

  async function stopInReverse(plugins: readonly Plugin[]): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (const plugin of [...plugins].reverse()) {
      try {
        await plugin.stop();
        logger.debug("plugin stopped", { plugin: plugin.name });
      } catch (error) {
        errors.push(error);
        logger.error("plugin failed to stop", { plugin: plugin.name, error });
      }
      running.delete(plugin.name);
      for (const name of plugin.provides) providers.delete(name);
    }
    return errors;
  }

  return {
    get started() {
      return ready;
    },
    get,
    require: (name) => requireProvider({ name, providers, plugins, config, started: ready }),
    async start(app) {
      if (ready) return;
      for (const plugin of plugins) plugin.beforeStart?.(setup);
      const ordered = orderPlugins(plugins, setup);
      for (const plugin of ordered) {
        try {
          running.set(plugin.name, await plugin.start({ ...setup, app, get, provide }));
        } catch (error) {
          // What did start is stopped again, newest first: a failed start leaves nothing open. The plugin
          // that failed closes what it opened itself before throwing.
          for (const name of plugin.provides) providers.delete(name);
          await stopInReverse(started);
          started = [];
          throw error;
        }
        started.push(plugin);
        logger.debug("plugin started", { plugin: plugin.name });
      }
      ready = true;
    },
    async stop() {
      const errors = await stopInReverse(started);
      started = [];
      ready = false;
      if (errors.length > 0) throw errors[0];
    },
  };
}

function requireProvider(params: {
  name: string;
  providers: Map<string, unknown>;
  plugins: readonly Plugin[];
  config: JfastConfig;
  started: boolean;
}): unknown {
  const { name, providers, config } = params;
  if (providers.has(name)) return providers.get(name);
  const plugin = params.plugins.find((p) => (p.provides as readonly string[]).includes(name));
  if (plugin && !config.plugins.has(plugin.plugin)) {
    throw new ConfigError(`"${name}" is provided by the ${plugin.plugin} plugin, which is not enabled`, {
      code: "PROVIDER_UNAVAILABLE",
      hint: `add "${plugin.plugin}" to [plugins] enabled in jfast.toml`,
      docs: "jfast docs configuration#plugins",
    });
  }
  const unavailable = plugin?.unavailable?.(config, name as keyof BuiltInProviders);
  if (unavailable) throw unavailable;
  if (plugin && !params.started) {
    throw new JfastError(`"${name}" is not available before jfast.start()`, {
      code: "NOT_STARTED",
      hint: "await jfast.start() before using providers",
      docs: "jfast docs embedding",
    });
  }
  throw new JfastError(`no provider named "${name}"`, {
    code: "PROVIDER_UNKNOWN",
    hint: `known providers: ${[...providers.keys()].join(", ") || "(none)"}; register your own with createJfast({ providers: { ${name}: ... } })`,
    docs: "jfast docs embedding#providers",
  });
}
