import { ConfigError } from "../errors/jfast-error.js";
import type { KafkaBus } from "../kafka/kafka-bus.js";
import type { Plugin } from "./plugin.js";

/**
 * `[plugin.kafka]`: Kafka between services, `on(...)` consumers and `events.publish` (docs/kafka.md). The plugin is
 * `kafka`; what it provides keeps the name services already use, `require("events")`.
 */
export function kafkaPlugin(): Plugin<"kafka"> {
  let bus: KafkaBus | null = null;
  return {
    name: "kafka",
    plugin: "kafka",
    requires: [],
    // Its `on` handlers use the others: consumers start after them and stop before them.
    after: ["telemetry", "database", "queue", "outbox"],
    provides: ["events"],
    enabled: ({ config }) => config.kafka !== null,
    check({ config, logger, eventHandlers }) {
      if (eventHandlers.length > 0 && !config.kafka && config.disabledPlugins.has("kafka")) {
        // Turned off for this process on purpose (a machine without Kafka): the service runs, its handlers wait.
        logger.warn(`the kafka plugin is off (JFAST_DISABLE_PLUGINS): ${eventHandlers.length} on(...) handler(s) consume nothing in this process`, {
          topics: [...new Set(eventHandlers.map((h) => h.topic))],
          docs: "jfast docs kafka#turning-kafka-off",
        });
        eventHandlers.length = 0;
      }
      if (eventHandlers.length > 0 && !config.kafka) {
        throw new ConfigError(`on("${eventHandlers[0]!.topic}") handlers need the kafka plugin`, {
          code: "CONFIG_PLUGIN_MISSING",
          hint: `add "kafka" to [plugins] enabled in jfast.toml and set [plugin.kafka] bootstrap_servers (or KAFKA_BROKERS)`,
          docs: "jfast docs kafka",
        });
      }
    },
    async start({ config, logger, app, eventHandlers, background, get, provide }) {
      // kafkajs is loaded only by services that enable the kafka plugin.
      const { createKafkaBus } = await import("../kafka/kafka-bus.js");
      const kafkaConfig = config.kafka!;
      const telemetry = get("telemetry");
      bus = await createKafkaBus({
        service: config.service.name,
        brokers: { brokers: kafkaConfig.brokers, from: kafkaConfig.brokersFrom },
        consumerGroup: kafkaConfig.consumerGroup,
        topicPrefix: kafkaConfig.topicPrefix,
        handlers: !background
          ? []
          : telemetry
            ? eventHandlers.map((h) => telemetry.wrapEventHandler(h, { consumerGroup: kafkaConfig.consumerGroup }))
            : eventHandlers,
        context: app,
        logger,
      });
      // Services publish through a traced bus; the relay and the health checks use the plain one.
      provide("events", telemetry ? telemetry.traceEvents(bus) : bus);
      return bus;
    },
    async stop() {
      await bus?.close();
      bus = null;
    },
  };
}
