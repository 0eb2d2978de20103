import { ConfigError } from "../errors/jfast-error.js";
import type { Plugin, PluginId, PluginSetup } from "./plugin.js";

/**
 * The enabled plugins, each after those it requires or follows; ties keep the order of `plugins`. A required
 * plugin that is not enabled, or plugins that wait for each other, stop start-up.
 */
export function orderPlugins(plugins: readonly Plugin[], setup: PluginSetup): Plugin[] {
  const byName = new Map<PluginId, Plugin>(plugins.map((p) => [p.name, p]));
  const enabled = plugins.filter((p) => p.enabled(setup));
  const on = new Set(enabled.map((p) => p.name));
  for (const plugin of enabled) {
    for (const required of plugin.requires) {
      if (on.has(required)) continue;
      const entry = byName.get(required)?.plugin ?? required;
      throw new ConfigError(`the ${plugin.name} plugin requires the ${required} plugin, which is not enabled`, {
        code: "CONFIG_PLUGIN_MISSING",
        hint: `add "${entry}" to [plugins] enabled in jfast.toml, or turn off what needs ${plugin.name}`,
        docs: "jfast docs embedding#how-a-service-is-assembled",
      });
    }
  }
  const ordered: Plugin[] = [];
  const placed = new Set<PluginId>();
  while (ordered.length < enabled.length) {
    const next = enabled.find((p) => !placed.has(p.name) && [...p.requires, ...p.after].every((d) => placed.has(d) || !on.has(d)));
    if (!next) {
      const waiting = enabled.filter((p) => !placed.has(p.name)).map((p) => p.name);
      throw new ConfigError(`plugins wait for each other and none can start first: ${waiting.join(", ")}`, {
        code: "PLUGIN_CYCLE",
        hint: "a plugin's requires and after must not lead back to itself",
        docs: "jfast docs embedding#how-a-service-is-assembled",
      });
    }
    ordered.push(next);
    placed.add(next.name);
  }
  return ordered;
}
