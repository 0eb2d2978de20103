import type { ThroughputPoint } from "~/trpc/contract";

const W = 300;
const H = 48;

/**
 * Jobs processed per minute as an area, failures as red ticks along the bottom. The label carries the totals,
 * so the numbers are there for screen readers and for anyone who does not read charts.
 */
export function Sparkline({ points, minutes }: { points: ThroughputPoint[]; minutes: number }) {
  const processed = points.reduce((n, p) => n + p.processed, 0);
  const failed = points.reduce((n, p) => n + p.failed, 0);
  const dead = points.reduce((n, p) => n + p.dead, 0);
  const max = Math.max(1, ...points.map((p) => p.processed + p.failed));
  const step = points.length > 1 ? W / (points.length - 1) : W;
  const y = (v: number) => H - 4 - (v / max) * (H - 8);
  const line = points.map((p, i) => `${(i * step).toFixed(1)},${y(p.processed).toFixed(1)}`).join(" ");
  const label = `Last ${minutes} minutes: ${processed} processed, ${failed} failed, ${dead} dead`;
  return (
    <figure className="stack" style={{ gap: 4, margin: 0 }} data-throughput={`${processed}/${failed}/${dead}`}>
      <svg className="sparkline" viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={label}>
        {points.length > 1 ? <polygon className="processed-area" points={`0,${H} ${line} ${W},${H}`} /> : null}
        {points.length > 1 ? <polyline className="processed" points={line} /> : null}
        {points.map((p, i) => (p.failed + p.dead > 0 ? <rect key={p.minute} className="failed" x={i * step - 1} y={H - 4} width={2.5} height={4} /> : null))}
      </svg>
      <figcaption className="muted" style={{ fontSize: 12 }}>
        {label}
      </figcaption>
    </figure>
  );
}
