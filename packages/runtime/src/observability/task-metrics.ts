import type { Registry } from "prom-client";

/**
 * Counters and histograms for the worker's per-attempt metrics, labelled by task (and outcome). prom-client's
 * own classes check, sort and hash the label object on every observation — a few microseconds per job, a
 * noticeable share of a no-op job's cost — where these look the series up by label values in nested maps and
 * add to an array. They are registered as custom metrics and hand prom-client the values in the shape its own
 * Counter and Histogram do, so the exposition text is the same (test/observability/task-metrics.test.ts
 * compares the two outputs for the same observations).
 */

/** What prom-client's registry formats: the shape its own metrics' `get()` returns. */
interface MetricData {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: Array<{ labels: Record<string, string | number>; sharedLabels?: Record<string, string>; value: number; metricName?: string }>;
}

interface HistogramSeries {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

/** One label (`task`) or two (`task`, `outcome`): series by the first value, then the second ("" when none). */
class SeriesMap<T> {
  private readonly byFirst = new Map<string, Map<string, T>>();

  constructor(
    private readonly labelNames: readonly [string] | readonly [string, string],
    private readonly create: (labels: Record<string, string>) => T,
  ) {}

  get(first: string, second = ""): T {
    let inner = this.byFirst.get(first);
    if (!inner) {
      inner = new Map();
      this.byFirst.set(first, inner);
    }
    let series = inner.get(second);
    if (!series) {
      const labels: Record<string, string> = { [this.labelNames[0]]: first };
      if (this.labelNames.length === 2) labels[this.labelNames[1]] = second;
      series = this.create(labels);
      inner.set(second, series);
    }
    return series;
  }

  *values(): Iterable<T> {
    for (const inner of this.byFirst.values()) yield* inner.values();
  }
}

interface MetricParams {
  name: string;
  help: string;
  labelNames: readonly [string] | readonly [string, string];
  /** Registries to add it to now; createMetrics adds its own at the first scrape. */
  registers?: Registry[];
}

export class TaskHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram" as const;
  readonly aggregator = "sum" as const;
  private readonly bounds: readonly number[];
  private readonly series: SeriesMap<HistogramSeries>;

  constructor(params: MetricParams & { buckets: readonly number[] }) {
    this.name = params.name;
    this.help = params.help;
    this.bounds = [...params.buckets].sort((a, b) => a - b);
    const slots = this.bounds.length + 1;
    this.series = new SeriesMap(params.labelNames, (labels) => ({ labels, counts: new Array<number>(slots).fill(0), sum: 0, count: 0 }));
    for (const registry of params.registers ?? []) registry.registerMetric(this as never);
  }

  observe(value: number, first: string, second?: string): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    const series = this.series.get(first, second);
    let slot = 0;
    while (slot < this.bounds.length && value > this.bounds[slot]!) slot++;
    series.counts[slot]!++;
    series.sum += value;
    series.count++;
  }

  async get(): Promise<MetricData> {
    const values: MetricData["values"] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le }, sharedLabels: series.labels, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels: series.labels, value: series.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export class TaskCounter {
  readonly name: string;
  readonly help: string;
  readonly type = "counter" as const;
  readonly aggregator = "sum" as const;
  private readonly series: SeriesMap<{ labels: Record<string, string>; value: number }>;

  constructor(params: MetricParams) {
    this.name = params.name;
    this.help = params.help;
    this.series = new SeriesMap(params.labelNames, (labels) => ({ labels, value: 0 }));
    for (const registry of params.registers ?? []) registry.registerMetric(this as never);
  }

  inc(first: string, second?: string): void {
    this.series.get(first, second).value++;
  }

  async get(): Promise<MetricData> {
    const values = [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
