import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { TaskCounter, TaskHistogram } from "../../src/observability/task-metrics.js";

/**
 * The worker's per-attempt metrics are jfast's own cheap counters and histograms; a scrape must read exactly
 * as it did with prom-client's classes. Both are fed the same observations here, in two registries with the
 * same default label, and their exposition compared line for line (series order aside, which Prometheus
 * does not read).
 */
describe("per-task metrics", () => {
  const BUCKETS = [0.005, 0.01, 0.1, 1, 10];
  // Task names an operator might not expect: quotes, backslashes, a newline, unicode.
  const TASKS = ["billing.charge", 'odd "quoted" task', "back\\slash\nnewline", "räksmörgås"];

  function pair() {
    const theirs = new Registry();
    const ours = new Registry();
    for (const registry of [theirs, ours]) registry.setDefaultLabels({ service: "svc" });
    return {
      theirs,
      ours,
      histogram2: {
        theirs: new Histogram({ name: "h2_seconds", help: "two labels", labelNames: ["task", "outcome"], buckets: BUCKETS, registers: [theirs] }),
        ours: new TaskHistogram({ name: "h2_seconds", help: "two labels", labelNames: ["task", "outcome"], buckets: BUCKETS, registers: [ours] }),
      },
      histogram1: {
        theirs: new Histogram({ name: "h1_seconds", help: "one label", labelNames: ["task"], buckets: BUCKETS, registers: [theirs] }),
        ours: new TaskHistogram({ name: "h1_seconds", help: "one label", labelNames: ["task"], buckets: BUCKETS, registers: [ours] }),
      },
      counter: {
        theirs: new Counter({ name: "c_total", help: "a counter", labelNames: ["task"], registers: [theirs] }),
        ours: new TaskCounter({ name: "c_total", help: "a counter", labelNames: ["task"], registers: [ours] }),
      },
    };
  }

  const lines = async (registry: Registry) => (await registry.metrics()).split("\n").sort();

  it("expose the same text as prom-client's Counter and Histogram for the same observations", async () => {
    const m = pair();
    // Values on bucket bounds, between them, above all of them, and zero.
    const values = [0, 0.005, 0.0051, 0.01, 0.05, 1, 9.99, 10, 10.01, 300];
    let i = 0;
    for (const task of TASKS) {
      for (const value of values) {
        const outcome = ["ok", "retry", "dead"][i++ % 3]!;
        m.histogram2.theirs.observe({ task, outcome }, value);
        m.histogram2.ours.observe(value, task, outcome);
        m.histogram1.theirs.observe({ task }, value);
        m.histogram1.ours.observe(value, task);
        m.counter.theirs.inc({ task });
        m.counter.ours.inc(task);
      }
    }
    const ours = await lines(m.ours);
    expect(ours).toEqual(await lines(m.theirs));
    // Not vacuous: the text holds every series, escaped.
    expect(ours).toContain('c_total{task="odd \\"quoted\\" task",service="svc"} 10');
    expect(ours).toContain('h1_seconds_bucket{le="+Inf",service="svc",task="back\\\\slash\\nnewline"} 10');
    expect(ours.filter((l) => l.startsWith("h2_seconds_count")).length).toBe(TASKS.length * 3);
  });

  it("expose nothing but their help and type before the first observation, as prom-client does", async () => {
    const m = pair();
    expect(await lines(m.ours)).toEqual(await lines(m.theirs));
  });

  it("refuse a value that is not a finite number, as prom-client does", () => {
    const m = pair();
    expect(() => m.histogram1.theirs.observe({ task: "t" }, Number.NaN)).toThrow(TypeError);
    expect(() => m.histogram1.ours.observe(Number.NaN, "t")).toThrow(TypeError);
  });
});
