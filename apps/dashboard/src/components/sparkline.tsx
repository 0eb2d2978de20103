import type { ThroughputPoint } from "~/trpc/types";

const W = 300;
const H = 48;

/**
 * One column per minute: jobs processed (blue) with the failed attempts stacked on top (red). The label and the
 * caption carry the totals, so the numbers are there for screen readers and for anyone who does not read charts.
 */
export function Sparkline({ points, minutes }: { points: ThroughputPoint[]; minutes: number }) {
  const processed = points.reduce((n, p) => n + p.processed, 0);
  const failed = points.reduce((n, p) => n + p.failed, 0);
  const dead = points.reduce((n, p) => n + p.dead, 0);
  const max = Math.max(1, ...points.map((p) => p.processed + p.failed));
  const column = W / Math.max(1, points.length);
  const height = (v: number) => (v / max) * (H - 2);
  const label = `Last ${minutes} minutes: ${processed} processed, ${failed} failed, ${dead} dead`;
  return (
    <figure className="stack" style={{ gap: 4, margin: 0 }} data-throughput={`${processed}/${failed}/${dead}`}>
      <svg className="sparkline" viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={label}>
        <line className="baseline" x1={0} y1={H - 0.5} x2={W} y2={H - 0.5} />
        {points.map((p, i) => {
          const ok = height(p.processed);
          const bad = height(p.failed);
          const x = i * column + column * 0.15;
          const w = column * 0.7;
          return (
            <g key={p.minute}>
              {ok > 0 ? <rect className="processed" x={x} y={H - ok} width={w} height={ok} /> : null}
              {bad > 0 ? <rect className="failed" x={x} y={H - ok - bad} width={w} height={bad} /> : null}
            </g>
          );
        })}
      </svg>
      <figcaption className="muted" style={{ fontSize: 12 }}>
        {label}
      </figcaption>
    </figure>
  );
}
