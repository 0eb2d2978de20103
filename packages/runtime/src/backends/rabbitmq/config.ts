import { z } from "zod";
import { ConfigError } from "../../errors/jfast-error.js";
import type { RabbitMqBackendOptions } from "./rabbitmq-backend.js";

/** `[plugin.queue]` keys only the RabbitMQ queue reads (with the keys every queue has). */
export const rabbitMqQueueKeys = {
  backend: z.literal("rabbitmq"),
  /** The broker queue type of the work queue, the delay cascade and the dead queue (docs/rabbitmq.md#queue-types). */
  queue_type: z.enum(["classic", "quorum"]).default("classic"),
};

type Section = z.output<z.ZodObject<typeof rabbitMqQueueKeys>> & { url?: string | undefined };

export interface RabbitMqQueueConfig {
  backend: "rabbitmq";
  /** AMQP_URL, else `[plugin.queue] url`; several, comma-separated, are nodes of one cluster. */
  url: string;
  queueType: "classic" | "quorum";
}

export const rabbitMqQueue = {
  backend: "rabbitmq",
  label: "the RabbitMQ queue",
  keys: rabbitMqQueueKeys,
  resolve(section: Section, at: { file: string; env: NodeJS.ProcessEnv }): RabbitMqQueueConfig {
    const url = at.env.AMQP_URL ?? section.url;
    if (!url) {
      throw new ConfigError(`${at.file}: [plugin.queue] backend = "rabbitmq" needs a url`, {
        code: "CONFIG_INVALID",
        hint: "set [plugin.queue] url, or the AMQP_URL environment variable",
        docs: "jfast docs configuration",
      });
    }
    return { backend: "rabbitmq", url, queueType: section.queue_type };
  },
  /** What the configuration decides of one named queue's backend; the stores and the logger are the caller's. */
  toOptions(config: RabbitMqQueueConfig, queue: { backendName: string; visibilityTimeoutMs: number }): Pick<RabbitMqBackendOptions, "url" | "queue" | "queueType" | "heartbeatSeconds"> {
    // The broker drops a silent connection after about two heartbeats, and a process whose event loop a handler
    // blocks is silent: twice the visibility timeout lets it block for three leases
    // (docs/rabbitmq.md#leases-the-unacked-delivery) while a vanished host's jobs still come back (the broker's
    // own default caps it at 60 s).
    const heartbeatSeconds = Math.min(60, Math.max(5, Math.ceil((queue.visibilityTimeoutMs * 2) / 1000)));
    return { url: config.url, queue: queue.backendName, queueType: config.queueType, heartbeatSeconds };
  },
} as const;
