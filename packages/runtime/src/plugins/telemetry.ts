import type { Telemetry } from "../observability/telemetry.js";
import type { Plugin } from "./plugin.js";

/** `[plugins] enabled = ["telemetry"]`: spans around enqueues, attempts and events (docs/observability.md). */
export function telemetryPlugin(): Plugin<"telemetry"> {
  // Made once per app: the tracer provider outlives a stop() so a later start() keeps exporting to it.
  let telemetry: Promise<Telemetry | null> | null = null;
  let started: Telemetry | null = null;
  return {
    name: "telemetry",
    plugin: "telemetry",
    requires: [],
    after: [],
    provides: [],
    enabled: ({ config }) => config.telemetry !== null,
    async start({ config, telemetry: options }) {
      telemetry ??= import("../observability/telemetry.js").then(({ createTelemetry }) =>
        createTelemetry({
          serviceName: config.telemetry!.serviceName,
          endpoint: config.telemetry!.endpoint,
          options,
        }),
      );
      started = await telemetry;
      return started;
    },
    async stop() {
      await started?.flush();
    },
  };
}
