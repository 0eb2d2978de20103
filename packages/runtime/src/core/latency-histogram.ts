/**
 * A fixed log-bucket histogram of milliseconds (docs/observability.md#run-and-wait-time-history): bucket 0 holds
 * values under 1 ms, bucket i ≥ 1 holds [2^((i-1)/4), 2^(i/4)) ms, so each bucket is 19 % wider than the one
 * before and the last, MAX_BUCKET, holds everything from about 49 days on. Every process uses the same bounds,
 * so histograms of one minute written by different processes merge by adding counts bucket by bucket (in SQL,
 * in Redis with HINCRBY, in memory). Stored sparse: only buckets that counted something.
 */
export type Histogram = Record<number, number>;

const PER_DOUBLING = 4;
export const MAX_BUCKET = 1 + 32 * PER_DOUBLING;

export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(MAX_BUCKET, 1 + Math.floor(Math.log2(ms) * PER_DOUBLING));
}

/** The bucket's bounds in ms: [low, high). */
export function bucketBounds(bucket: number): { low: number; high: number } {
  if (bucket <= 0) return { low: 0, high: 1 };
  return { low: 2 ** ((bucket - 1) / PER_DOUBLING), high: bucket >= MAX_BUCKET ? Infinity : 2 ** (bucket / PER_DOUBLING) };
}

export function observe(into: Histogram, ms: number): void {
  const bucket = bucketOf(ms);
  into[bucket] = (into[bucket] ?? 0) + 1;
}

export function mergeInto(into: Histogram, from: Histogram): void {
  for (const [bucket, count] of Object.entries(from)) into[Number(bucket)] = (into[Number(bucket)] ?? 0) + count;
}

export function countOf(histogram: Histogram): number {
  let n = 0;
  for (const count of Object.values(histogram)) n += count;
  return n;
}

/**
 * The q-quantile (0 < q ≤ 1) as the geometric middle of the bucket holding it, rounded to 0.1 ms: off by at most
 * 9 % from any value in that bucket. null for an empty histogram.
 */
export function quantile(histogram: Histogram, q: number): number | null {
  const buckets = Object.keys(histogram).map(Number).sort((a, b) => a - b);
  const total = countOf(histogram);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const bucket of buckets) {
    seen += histogram[bucket]!;
    if (seen >= rank) return representative(bucket);
  }
  return representative(buckets[buckets.length - 1]!);
}

/** The highest value the histogram may hold: the upper bound of its highest bucket (its lower bound for the last). */
export function maxOf(histogram: Histogram): number | null {
  const buckets = Object.keys(histogram).map(Number).filter((b) => histogram[b]! > 0);
  if (buckets.length === 0) return null;
  const { low, high } = bucketBounds(Math.max(...buckets));
  return Math.round((Number.isFinite(high) ? high : low) * 10) / 10;
}

function representative(bucket: number): number {
  const { low, high } = bucketBounds(bucket);
  if (bucket === 0) return 0.5;
  const middle = Number.isFinite(high) ? Math.sqrt(low * high) : low;
  return Math.round(middle * 10) / 10;
}

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export function percentilesOf(histogram: Histogram): Percentiles {
  return { p50: quantile(histogram, 0.5), p95: quantile(histogram, 0.95), p99: quantile(histogram, 0.99) };
}
