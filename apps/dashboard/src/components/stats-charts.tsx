"use client";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { AdminOutputs } from "~/trpc/types";

export type StatsSeries = AdminOutputs["stats"]["series"];
export type StatsPoint = StatsSeries["points"][number];
/** A point of the history: its start, and jobs and milliseconds as the admin API gives them. */
type Span = StatsSeries["span"];

const COLORS = { completed: "var(--accent)", failed: "var(--warn)", dead: "var(--bad)", p50: "var(--accent)", p95: "var(--warn)", p99: "var(--bad)" } as const;
const AXIS = { fontSize: 11, fill: "var(--muted)" } as const;

// Made once: a formatter made per call (toLocaleTimeString with options) costs more than the chart's drawing.
const TIME = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit", hour12: false });
const DAY = new Intl.DateTimeFormat([], { month: "short", day: "numeric" });

/** 14:05 for minutes, "Dec 6 14:00" for hours (the viewer's time zone). */
export function tickLabel(iso: string, span: Span): string {
  const date = new Date(iso);
  const time = TIME.format(date);
  return span === "hour" ? `${DAY.format(date)} ${time}` : time;
}

/** At most this many labels on a time axis. */
const MAX_TICKS = 8;

/**
 * The time axis's labelled points: evenly spaced from the oldest (the newest, at the right edge, would be cut in
 * half). Given to the axis, so a day of minutes (1 440 points) lays out 8 labels instead of measuring 1 440 to
 * find which fit.
 */
export function timeTicks(points: ReadonlyArray<{ at: string }>): string[] {
  if (points.length <= MAX_TICKS) return points.map((p) => p.at);
  const step = Math.ceil(points.length / MAX_TICKS);
  const ticks: string[] = [];
  for (let i = 0; i < points.length; i += step) ticks.push(points[i]!.at);
  return ticks;
}

/** 0.5 ms, 42 ms, 1.2 s, 3.1 min, 2.0 h */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 10) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

function perLabel(span: Span): string {
  return span === "hour" ? "jobs / hour" : "jobs / min";
}

/**
 * Jobs completed, failed and dead-lettered per minute or hour, stacked, with a time axis, a count axis and a
 * tooltip per column. The figure's label and caption carry the totals for whoever does not read charts.
 */
export function ThroughputChart({ points, span, label, height = 180 }: { points: Array<{ at: string; completed: number; failed: number; dead: number }>; span: Span; label: string; height?: number }) {
  const completed = points.reduce((n, p) => n + p.completed, 0);
  const failed = points.reduce((n, p) => n + p.failed, 0);
  const dead = points.reduce((n, p) => n + p.dead, 0);
  const summary = `${label}: ${completed} completed, ${failed} failed, ${dead} dead`;
  // A dead-lettered attempt is also a failed one: the bars stack the failures that were retried and the deaths.
  const bars = points.map((p) => ({ at: p.at, completed: p.completed, retried: Math.max(0, p.failed - p.dead), dead: p.dead }));
  return (
    <figure className="chart" style={{ margin: 0 }} data-chart="throughput" data-throughput={`${completed}/${failed}/${dead}`} role="group" aria-label={summary}>
      <div style={{ width: "100%", height }}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={bars} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} barCategoryGap={1}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis dataKey="at" ticks={timeTicks(bars)} interval={0} tickFormatter={(v: string) => tickLabel(v, span)} tick={AXIS} stroke="var(--border-strong)" />
            <YAxis allowDecimals={false} tick={AXIS} width={48} stroke="var(--border-strong)" label={{ value: perLabel(span), angle: -90, position: "insideLeft", style: AXIS }} />
            <Tooltip
              labelFormatter={(v) => tickLabel(String(v), span)}
              formatter={(value, name) => [`${String(value)} ${span === "hour" ? "in the hour" : "in the minute"}`, String(name)]}
              contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
            />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar dataKey="completed" name="completed" stackId="jobs" fill={COLORS.completed} isAnimationActive={false} />
            <Bar dataKey="retried" name="failed, retried" stackId="jobs" fill={COLORS.failed} isAnimationActive={false} />
            <Bar dataKey="dead" name="dead" stackId="jobs" fill={COLORS.dead} isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="muted" style={{ fontSize: 12 }}>
        {summary}
      </figcaption>
    </figure>
  );
}

/** p50, p95 and p99 of run time or wait per minute or hour, in milliseconds, with a time axis and a duration axis. */
export function LatencyChart({ points, span, field, label, height = 180 }: { points: StatsPoint[]; span: Span; field: "runMs" | "waitMs"; label: string; height?: number }) {
  const data = points.map((p) => ({ at: p.at, p50: p[field].p50, p95: p[field].p95, p99: p[field].p99 }));
  const worst = data.reduce((n, p) => Math.max(n, p.p99 ?? 0), 0);
  const recorded = data.filter((p) => p.p50 !== null).length;
  const summary = recorded === 0 ? `${label}: nothing recorded` : `${label}: p99 at most ${formatMs(worst)} over ${recorded} ${span}${recorded === 1 ? "" : "s"} with attempts`;
  return (
    <figure className="chart" style={{ margin: 0 }} data-chart={field} data-recorded={recorded} role="group" aria-label={summary}>
      <div style={{ width: "100%", height }}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis dataKey="at" ticks={timeTicks(data)} interval={0} tickFormatter={(v: string) => tickLabel(v, span)} tick={AXIS} stroke="var(--border-strong)" />
            <YAxis tickFormatter={(v: number) => formatMs(v)} tick={AXIS} width={64} stroke="var(--border-strong)" />
            <Tooltip
              labelFormatter={(v) => tickLabel(String(v), span)}
              formatter={(value, name) => [formatMs(typeof value === "number" ? value : null), String(name)]}
              contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
            />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            {(["p50", "p95", "p99"] as const).map((key) => (
              <Line key={key} type="monotone" dataKey={key} name={key} stroke={COLORS[key]} dot={recorded < 3} connectNulls isAnimationActive={false} strokeWidth={2} />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="muted" style={{ fontSize: 12 }}>
        {summary}
      </figcaption>
    </figure>
  );
}
