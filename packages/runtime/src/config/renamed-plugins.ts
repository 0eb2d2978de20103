import { ConfigError } from "../errors/jfast-error.js";

/**
 * Plugin ids that changed, old → new. An old id would otherwise fail as an unknown plugin or key; this names
 * the new one instead, so an upgrade says exactly what to edit.
 */
export const RENAMED_PLUGINS = { events: "kafka" } as const;

const DOCS = "jfast docs kafka#renamed-from-events";

/** Stops start-up when jfast.toml (or the overrides on top of it) still uses an old plugin id. */
export function refuseRenamedPlugins(data: unknown, file: string): void {
  if (!isObject(data)) return;
  const enabled = isObject(data.plugins) && Array.isArray(data.plugins.enabled) ? data.plugins.enabled : [];
  const sections = isObject(data.plugin) ? Object.keys(data.plugin) : [];
  for (const [old, now] of Object.entries(RENAMED_PLUGINS)) {
    const where = [enabled.includes(old) ? `"${old}" in [plugins] enabled` : null, sections.includes(old) ? `[plugin.${old}]` : null].filter(Boolean);
    if (where.length === 0) continue;
    throw new ConfigError(`${file}: the "${old}" plugin is now called "${now}" (found ${where.join(" and ")})`, {
      code: "CONFIG_PLUGIN_RENAMED",
      hint: `rename "${old}" to "${now}" in [plugins] enabled and [plugin.${old}] to [plugin.${now}]`,
      docs: DOCS,
    });
  }
}

/** The same for JFAST_DISABLE_PLUGINS. */
export function refuseRenamedDisabledPlugins(names: readonly string[]): void {
  for (const [old, now] of Object.entries(RENAMED_PLUGINS)) {
    if (!names.includes(old)) continue;
    throw new ConfigError(`JFAST_DISABLE_PLUGINS names "${old}", a plugin that is now called "${now}"`, {
      code: "CONFIG_PLUGIN_RENAMED",
      hint: `write JFAST_DISABLE_PLUGINS=${names.map((n) => (n === old ? now : n)).join(",")}`,
      docs: DOCS,
    });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
