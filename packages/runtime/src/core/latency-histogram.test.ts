import { describe, expect, it } from "vitest";
import { bucketBounds, bucketOf, maxOf, MAX_BUCKET, mergeInto, observe, percentilesOf, quantile, type Histogram } from "./latency-histogram.js";

describe("latency histogram", () => {
  it("puts each value in the bucket whose bounds hold it", () => {
    for (const ms of [0, 0.4, 1, 1.5, 7, 250, 999, 60_000, 3_600_000]) {
      const { low, high } = bucketBounds(bucketOf(ms));
      expect(ms).toBeGreaterThanOrEqual(low);
      expect(ms).toBeLessThan(high);
    }
    expect(bucketOf(1e15)).toBe(MAX_BUCKET);
  });

  it("answers a percentile inside the bucket of the true value", () => {
    const h: Histogram = {};
    for (let i = 1; i <= 1000; i++) observe(h, i);
    for (const [q, truth] of [[0.5, 500], [0.95, 950], [0.99, 990]] as const) {
      const { low, high } = bucketBounds(bucketOf(truth));
      const answer = quantile(h, q)!;
      expect(answer).toBeGreaterThanOrEqual(low);
      expect(answer).toBeLessThan(high);
    }
    expect(maxOf(h)).toBeGreaterThanOrEqual(1000);
  });

  it("merges two processes' histograms by adding counts", () => {
    const a: Histogram = {};
    const b: Histogram = {};
    for (let i = 0; i < 90; i++) observe(a, 10);
    for (let i = 0; i < 10; i++) observe(b, 1000);
    mergeInto(a, b);
    const p = percentilesOf(a);
    expect(bucketOf(p.p50!)).toBe(bucketOf(10));
    expect(bucketOf(p.p95!)).toBe(bucketOf(1000));
    expect(percentilesOf({})).toEqual({ p50: null, p95: null, p99: null });
  });
});
