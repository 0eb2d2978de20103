import { describe, expect, it } from "vitest";
import { createMetrics, type MetricSources } from "../../src/observability/metrics.js";
import type { OutboxHealth } from "../../src/outbox/outbox-health.js";
import { parse, value } from "./prometheus.js";

/**
 * The outbox's backlog and lag gauges come from one read of its health per scrape: read twice, a scrape taken
 * while the relay moved rows from pending to dead could show them dead next to the lag they had while pending.
 * The source here answers differently on every read, as a live outbox does.
 */
describe("/metrics: the outbox gauges of one scrape", () => {
  it("describe one moment: one health read per scrape, shared by both gauges", async () => {
    const states: Array<Pick<OutboxHealth, "pending" | "failing" | "dead" | "lagSeconds">> = [
      { pending: 2, failing: 2, dead: 0, lagSeconds: 1.5 },
      { pending: 0, failing: 0, dead: 2, lagSeconds: 0 },
    ];
    let reads = 0;
    const sources: MetricSources = {
      backend: () => null,
      depths: () => null,
      depthsByTask: () => null,
      tasks: () => [],
      outbox: () => {
        const state = states[Math.min(reads++, states.length - 1)]!;
        return Promise.resolve({ status: "ok", lastError: null, relay: null, ...state } as OutboxHealth);
      },
      scheduler: () => null,
      events: () => null,
    };
    const metrics = createMetrics({ service: "svc", queue: "jfast.jobs", sources });
    const scrape = async () => {
      const samples = parse(await metrics.render());
      return {
        pending: value(samples, "jfast_outbox_pending", { state: "pending" }),
        dead: value(samples, "jfast_outbox_pending", { state: "dead" }),
        lag: value(samples, "jfast_outbox_lag_seconds"),
      };
    };
    expect(await scrape()).toEqual({ pending: 2, dead: 0, lag: 1.5 });
    expect(reads).toBe(1);
    // The next scrape reads again, once.
    expect(await scrape()).toEqual({ pending: 0, dead: 2, lag: 0 });
    expect(reads).toBe(2);
  });
});
