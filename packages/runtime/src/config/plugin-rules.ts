import { ConfigError } from "../errors/jfast-error.js";
import { refuseRenamedDisabledPlugins } from "./renamed-plugins.js";
import { PLUGIN_NAMES, type PluginName, type RawConfig } from "./schema.js";

const DOCS = "jfast docs configuration";

/** `[plugins] enabled` less JFAST_DISABLE_PLUGINS. */
export function enabledPlugins(raw: RawConfig, env: NodeJS.ProcessEnv): { enabled: Set<PluginName>; disabled: Set<PluginName> } {
  const enabled = new Set<PluginName>(raw.plugins.enabled);
  const disabled = disabledPlugins(env);
  for (const name of disabled) enabled.delete(name);
  return { enabled, disabled };
}

/**
 * JFAST_DISABLE_PLUGINS="kafka,telemetry": plugins turned off in this process whatever jfast.toml enables (a
 * laptop without Kafka runs the service without its kafka plugin). Their [plugin.x] sections are ignored.
 */
function disabledPlugins(env: NodeJS.ProcessEnv): Set<PluginName> {
  const names = (env.JFAST_DISABLE_PLUGINS ?? "").split(",").map((n) => n.trim()).filter(Boolean);
  refuseRenamedDisabledPlugins(names);
  const unknown = names.filter((n) => !(PLUGIN_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new ConfigError(`JFAST_DISABLE_PLUGINS names ${unknown.map((n) => `"${n}"`).join(", ")}, which ${unknown.length > 1 ? "are not plugins" : "is not a plugin"}`, {
      code: "CONFIG_INVALID",
      hint: `list plugin names separated by commas (known plugins are ${PLUGIN_NAMES.join(", ")}), e.g. JFAST_DISABLE_PLUGINS=kafka`,
      docs: "jfast docs configuration#environment-variables",
    });
  }
  return new Set(names as PluginName[]);
}

/** What one plugin's section asks of the others: a section without its plugin, a plugin without the database. */
export function refusePluginConflicts(params: { raw: RawConfig; enabled: ReadonlySet<PluginName>; disabled: ReadonlySet<PluginName>; file: string }): void {
  const { raw, enabled, disabled, file } = params;
  for (const section of Object.keys(raw.plugin) as PluginName[]) {
    if (raw.plugin[section] !== undefined && !enabled.has(section) && !disabled.has(section)) {
      throw new ConfigError(`${file}: [plugin.${section}] is configured but the "${section}" plugin is not enabled`, {
        code: "CONFIG_PLUGIN_MISSING",
        hint: `add "${section}" to [plugins] enabled, or remove the [plugin.${section}] section`,
        docs: DOCS,
      });
    }
  }
  if (raw.queues !== undefined && !enabled.has("queue")) {
    throw new ConfigError(`${file}: [queues.${Object.keys(raw.queues)[0] ?? "<name>"}] is configured but the "queue" plugin is not enabled`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "queue" to [plugins] enabled, or remove the [queues] sections`,
      docs: "jfast docs queues#configuration",
    });
  }
  if (enabled.has("queue") && (raw.plugin.queue?.backend ?? "postgres") === "postgres" && !enabled.has("database")) {
    throw new ConfigError(`${file}: [plugin.queue] backend = "postgres" needs the database plugin`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "database" to [plugins] enabled (with no url it runs embedded under .jfast/), or choose another backend`,
      docs: DOCS,
    });
  }
  if (enabled.has("outbox") && !enabled.has("database")) {
    throw new ConfigError(`${file}: the outbox writes in your database transaction, so it needs the database plugin`, {
      code: "CONFIG_PLUGIN_MISSING",
      hint: `add "database" to [plugins] enabled`,
      docs: "jfast docs outbox",
    });
  }
}
