import { ConfigError } from "../errors/jfast-error.js";
import type { KafkaBus } from "../kafka/kafka-bus.js";
import type { Plugin } from "./plugin.js";

/** `[plugin.events]`: Kafka between services, `on(...)` consumers and `events.publish` (docs/kafka.md). */
export function eventsPlugin(): Plugin<"events"> {
  let events: KafkaBus | null = null;
  return {
    name: "events",
    plugin: "events",
    requires: [],
    // Its `on` handlers use the others: consumers start after them and stop before them.
    after: ["telemetry", "database", "queue", "outbox"],
    provides: ["events"],
    enabled: ({ config }) => config.events !== null,
    check({ config, logger, eventHandlers }) {
      if (eventHandlers.length > 0 && !config.events && config.disabledPlugins.has("events")) {
        // Turned off for this process on purpose (a machine without Kafka): the service runs, its handlers wait.
        logger.warn(`the events plugin is off (JFAST_DISABLE_PLUGINS): ${eventHandlers.length} on(...) handler(s) consume nothing in this process`, {
          topics: [...new Set(eventHandlers.map((h) => h.topic))],
          docs: "jfast docs kafka#turning-kafka-off",
        });
        eventHandlers.length = 0;
      }
      if (eventHandlers.length > 0 && !config.events) {
        throw new ConfigError(`on("${eventHandlers[0]!.topic}") handlers need the events plugin (Kafka)`, {
          code: "CONFIG_PLUGIN_MISSING",
          hint: `add "events" to [plugins] enabled in jfast.toml and set [plugin.events] bootstrap_servers (or KAFKA_BROKERS)`,
          docs: "jfast docs kafka",
        });
      }
    },
    async start({ config, logger, app, eventHandlers, background, get, provide }) {
      // kafkajs is loaded only by services that enable the events plugin.
      const { createKafkaBus } = await import("../kafka/kafka-bus.js");
      const eventsConfig = config.events!;
      const telemetry = get("telemetry");
      events = await createKafkaBus({
        service: config.service.name,
        brokers: { brokers: eventsConfig.brokers, from: eventsConfig.brokersFrom },
        consumerGroup: eventsConfig.consumerGroup,
        topicPrefix: eventsConfig.topicPrefix,
        handlers: !background
          ? []
          : telemetry
            ? eventHandlers.map((h) => telemetry.wrapEventHandler(h, { consumerGroup: eventsConfig.consumerGroup }))
            : eventHandlers,
        context: app,
        logger,
      });
      // Services publish through a traced bus; the relay and the health checks use the plain one.
      provide("events", telemetry ? telemetry.instrumentEvents(events) : events);
      return events;
    },
    async stop() {
      await events?.close();
      events = null;
    },
  };
}
