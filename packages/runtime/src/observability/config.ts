import { z } from "zod";

/** `[plugin.observability]`. */
export const observabilitySchema = z.strictObject({
  log_level: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  /** GET /metrics in production (always open elsewhere), like [plugin.queue] expose_stats. */
  expose_metrics: z.boolean().default(false),
});

/** `[plugin.telemetry]` (docs/observability.md). */
export const telemetrySchema = z.strictObject({ endpoint: z.string().optional(), service_name: z.string().optional() });

export type LogLevel = z.output<typeof observabilitySchema>["log_level"];

export interface ObservabilityConfig {
  logLevel: LogLevel;
  /** GET /metrics answers: outside production always, in production with `expose_metrics = true`. */
  metrics: { open: boolean };
}

export interface TelemetryConfig {
  /** `service_name`, else `[service] name`. */
  serviceName: string;
  /** The OTLP endpoint; none: spans go only to a span exporter given to createJfast. */
  endpoint: string | undefined;
}

export function resolveObservability(section: z.output<typeof observabilitySchema> | undefined, at: { production: boolean }): ObservabilityConfig {
  return { logLevel: section?.log_level ?? "info", metrics: { open: !at.production || section?.expose_metrics === true } };
}

export function resolveTelemetry(section: z.output<typeof telemetrySchema> | undefined, at: { service: { name: string } }): TelemetryConfig {
  return { serviceName: section?.service_name ?? at.service.name, endpoint: section?.endpoint };
}
