import type { Outbox } from "../outbox/outbox.js";
import type { Plugin } from "./plugin.js";

/** `[plugins] enabled = ["outbox"]`: jobs and events written in the caller's transaction (docs/outbox.md). */
export function outboxPlugin(): Plugin<"outbox"> {
  return {
    name: "outbox",
    plugin: "outbox",
    requires: ["database"],
    after: ["queue", "telemetry"],
    provides: ["outbox"],
    enabled: ({ config }) => config.outbox !== null,
    async start({ config, logger, registry, get, provide }) {
      const [{ createOutbox }, { createOutboxEventBus }, { outboxChannel }] = await Promise.all([
        import("../outbox/outbox.js"),
        import("../outbox/outbox-event-bus.js"),
        import("../outbox/channel.js"),
      ]);
      const database = get("database")!;
      const queue = get("queue")?.provider ?? null;
      // With Kafka on, outbox.publish also writes the event as an outbox row the relay produces to its topic.
      const bus = config.kafka ? createOutboxEventBus({ maxAttempts: config.outbox!.maxAttempts, channel: outboxChannel(database.schema) }) : null;
      const { encryptionOf } = await import("../encryption/job-encryption.js");
      const encryption = encryptionOf(config, registry);
      const telemetry = get("telemetry");
      // Traced once, here; the subscriber jobs outbox.publish enqueues go through the traced enqueue too.
      let outbox: Outbox | null = null;
      const untraced = createOutbox({ database, queue, config, logger, registry, bus: () => bus, relay: () => get("relay"), encryption, provided: () => outbox! });
      outbox = telemetry ? telemetry.traceOutbox(untraced, queue?.name ?? null) : untraced;
      provide("outbox", outbox);
      return outbox;
    },
    // Nothing of its own to close: it writes through the database and the queue.
    async stop() {},
  };
}
