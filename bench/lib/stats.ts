/** Median and spread of repeated measurements; percentiles of one run's latencies. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** "median (min–max)" with a precision suited to the magnitude. */
export function withSpread(values: number[], digits = 0): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return "—";
  const f = (v: number) => v.toFixed(digits);
  if (finite.length === 1) return f(finite[0]!);
  return `${f(median(finite))} (${f(Math.min(...finite))}–${f(Math.max(...finite))})`;
}
