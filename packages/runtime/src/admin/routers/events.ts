import type { EventsStatus } from "../../kafka/events-bus.js";
import { router, viewerProcedure } from "../trpc.js";

/** `events.status`: where this service's consumer group stands in every partition it consumes (docs/admin-api.md#events). */
export interface EventsView {
  /** The kafka plugin runs in this service (enabled in jfast.toml and not turned off). */
  enabled: boolean;
  /** True when the numbers below come from the running plugin; false when it is off or not started. */
  reported: boolean;
  /** The consumer group of the service's `on` handlers; null when it consumes nothing. */
  group: string | null;
  /** Why the partitions are missing or not current (unreachable broker, stopped consumer), else null. */
  error: string | null;
  /** JFAST_DISABLE_PLUGINS turned the plugin off in this process although jfast.toml enables it. */
  turnedOff: boolean;
  /** When the offsets were read from the broker (they are reused for two seconds); null before the first read. */
  offsetsReadAt: string | null;
  partitions: EventsStatus["partitions"];
}

export const eventsRouter = router({
  /** Committed offset, end offset, lag and the blocked message of each consumed partition. */
  status: viewerProcedure.query(async ({ ctx }): Promise<EventsView> => {
    const { sources } = ctx;
    const enabled = sources.plugins.includes("kafka");
    const turnedOff = sources.disabledPlugins.includes("kafka");
    const bus = sources.events();
    if (!bus) {
      return {
        enabled,
        reported: false,
        group: null,
        error: enabled ? "the kafka plugin has not started in this process" : null,
        turnedOff,
        offsetsReadAt: null,
        partitions: [],
      };
    }
    const status = await bus.status();
    return { enabled, reported: true, turnedOff, ...status };
  }),
});
