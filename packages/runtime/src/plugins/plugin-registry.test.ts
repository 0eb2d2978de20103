import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/load-config.js";
import { JobEvents } from "../core/job-events.js";
import { TaskRegistry } from "../core/registry.js";
import { createLogger } from "../observability/logger.js";
import type { Plugin, PluginId, PluginSetup } from "./plugin.js";
import { createPluginRegistry } from "./plugin-registry.js";

const config = resolveConfig({ root: "/srv", file: "/srv/jfast.toml", data: { service: { name: "shop" } }, env: {} });
const setup: PluginSetup = {
  config,
  logger: createLogger({ service: "shop", level: "silent" }),
  registry: new TaskRegistry(),
  eventHandlers: [],
  background: true,
  backend: undefined,
  events: new JobEvents(() => undefined),
  telemetry: undefined,
};
const app = { serviceName: "shop", require: () => undefined as never };

/** A plugin that writes what happens to it in `log`; `fails` makes its start throw. */
function fake(log: string[], name: PluginId, deps: { requires?: PluginId[]; after?: PluginId[]; fails?: boolean; enabled?: boolean } = {}): Plugin {
  return {
    name,
    plugin: "queue",
    requires: deps.requires ?? [],
    after: deps.after ?? [],
    provides: [],
    enabled: () => deps.enabled ?? true,
    async start() {
      if (deps.fails) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
      return null as never;
    },
    async stop() {
      log.push(`stop ${name}`);
    },
  };
}

function registryOf(plugins: Plugin[]) {
  return createPluginRegistry({ plugins, setup, providers: new Map() });
}

describe("the plugin registry", () => {
  it("starts each plugin after those it requires or follows, in list order otherwise, and stops them in reverse", async () => {
    const log: string[] = [];
    const plugins = registryOf([
      fake(log, "relay", { requires: ["outbox"], after: ["queue"] }),
      fake(log, "outbox", { requires: ["database"], after: ["queue"] }),
      fake(log, "telemetry"),
      fake(log, "queue", { after: ["database", "kafka"] }),
      fake(log, "database"),
    ]);
    await plugins.start(app);
    expect(plugins.started).toBe(true);
    await plugins.stop();
    expect(log).toEqual([
      "start telemetry",
      "start database",
      "start queue",
      "start outbox",
      "start relay",
      "stop relay",
      "stop outbox",
      "stop queue",
      "stop database",
      "stop telemetry",
    ]);
    expect(plugins.started).toBe(false);
  });

  it("a plugin that fails to start stops the ones already started, newest first, and start() rejects with its error", async () => {
    const log: string[] = [];
    const plugins = registryOf([fake(log, "database"), fake(log, "queue", { after: ["database"] }), fake(log, "kafka", { after: ["queue"], fails: true }), fake(log, "relay", { after: ["kafka"] })]);
    await expect(plugins.start(app)).rejects.toThrow("kafka cannot start");
    expect(log).toEqual(["start database", "start queue", "stop queue", "stop database"]);
    expect(plugins.started).toBe(false);
    await plugins.stop();
    expect(log).toHaveLength(4);
  });

  it("leaves plugins that are not enabled out, and a plugin after one of them starts anyway", async () => {
    const log: string[] = [];
    await registryOf([fake(log, "kafka", { enabled: false }), fake(log, "scheduler", { after: ["kafka"] })]).start(app);
    expect(log).toEqual(["start scheduler"]);
  });

  it("refuses a required plugin that is not enabled, naming both", async () => {
    const plugins = registryOf([fake(log(), "outbox", { enabled: false }), fake(log(), "relay", { requires: ["outbox"] })]);
    await expect(plugins.start(app)).rejects.toMatchObject({
      code: "CONFIG_PLUGIN_MISSING",
      message: expect.stringContaining("the relay plugin requires the outbox plugin, which is not enabled"),
    });
  });

  it("refuses plugins that wait for each other", async () => {
    const plugins = registryOf([fake(log(), "database"), fake(log(), "queue", { after: ["outbox"] }), fake(log(), "outbox", { requires: ["queue"] })]);
    await expect(plugins.start(app)).rejects.toMatchObject({
      code: "PLUGIN_CYCLE",
      message: expect.stringContaining("queue, outbox"),
    });
  });
});

function log(): string[] {
  return [];
}
