import type { OutboxRelay } from "../outbox/relay.js";
import type { Plugin } from "./plugin.js";

/** The outbox relay of this process: moves committed rows to the queue and the event bus (docs/outbox.md#the-relay). */
export function relayPlugin(): Plugin<"relay"> {
  let relay: OutboxRelay | null = null;
  return {
    name: "relay",
    plugin: "outbox",
    requires: ["outbox"],
    // Last: it delivers to the queue and the event bus, so both must be up; stopped first, before they close
    // under a send (rows in flight are given back).
    after: ["queue", "kafka"],
    provides: [],
    enabled: ({ config, background }) => config.outbox !== null && background,
    async start({ config, logger, get }) {
      const { startOutboxRelay } = await import("../outbox/start-relay.js");
      relay = await startOutboxRelay({
        database: get("database")!,
        config,
        logger,
        queue: () => get("queue")?.provider ?? null,
        events: () => get("kafka"),
      });
      return relay;
    },
    async stop() {
      await relay?.stop();
      relay = null;
    },
  };
}
