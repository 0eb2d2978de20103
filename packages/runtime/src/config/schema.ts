import { z } from "zod";
import { adminSchema } from "../admin/config.js";
import { alertingSchema, alertsSchema } from "../alerts/config.js";
import { databaseSchema } from "../database/config.js";
import { httpSchema } from "../http/config.js";
import { kafkaSchema } from "../kafka/config.js";
import { observabilitySchema, telemetrySchema } from "../observability/config.js";
import { outboxSchema } from "../outbox/config.js";
import { queueSchema, queuesSchema } from "../queue/config.js";

/** Plugin names accepted in `[plugins] enabled`. */
export const PLUGIN_NAMES = ["observability", "database", "queue", "outbox", "kafka", "telemetry"] as const;
export type PluginName = (typeof PLUGIN_NAMES)[number];

/** jfast.toml: each section's schema is its owner's (docs/configuration.md); this only puts them in place. */
export const configSchema = z.strictObject({
  service: z.strictObject({
    name: z.string().regex(/^[a-z][a-z0-9_-]*$/, "a lower-case name such as \"billing\""),
    base_port: z.number().int().min(1).max(65535).default(8000),
    environment: z.enum(["development", "production", "test"]).optional(),
  }),
  plugins: z
    .strictObject({
      enabled: z.array(z.enum(PLUGIN_NAMES)).default([]),
    })
    .default({ enabled: [] }),
  plugin: z
    .strictObject({
      observability: observabilitySchema.optional(),
      database: databaseSchema.optional(),
      queue: queueSchema.optional(),
      outbox: outboxSchema.optional(),
      kafka: kafkaSchema.optional(),
      telemetry: telemetrySchema.optional(),
    } satisfies Record<PluginName, z.ZodType>)
    .default({}),
  /** Named queues, each with its own worker slots (docs/queues.md); `default` is the queue of tasks that name none. */
  queues: queuesSchema.optional(),
  http: httpSchema.optional(),
  admin: adminSchema.optional(),
  /** `[[alerts]]` rules and `[alerting]` (docs/alerts.md). */
  alerts: alertsSchema.optional(),
  alerting: alertingSchema.optional(),
});

export type RawConfig = z.infer<typeof configSchema>;
