import { router, viewerProcedure } from "../trpc.js";

export interface EventsView {
  /** The Kafka events plugin is enabled in jfast.toml. */
  enabled: boolean;
  /** Consumer lag per topic partition; empty until the events plugin reports it. */
  consumers: { group: string; topic: string; partition: number; lag: number; blocked: boolean }[];
  reported: boolean;
}

export const eventsRouter = router({
  /** Kafka consumer lag and blocked partitions. */
  status: viewerProcedure.query(({ ctx }): EventsView => ({
    enabled: ctx.sources.plugins.includes("events"),
    consumers: [],
    reported: false,
  })),
});
