"use client";
import type { AttemptInfo, JobLogLine, JobProgress } from "@jfast/runtime/admin";
import { Badge, type Tone } from "./badge";
import { RelativeTime } from "./time";

/** How long the drawer waits between reads of a running job, for its progress (written about once a second). */
export const RUNNING_REFRESH_MS = 1000;

const OUTCOME_TONE: Record<AttemptInfo["outcome"], Tone> = { completed: "ok", failed: "warn", dead: "bad", snoozed: "neutral" };

/** `850 ms`, `12.3 s`, `4 min 05 s`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** A job's progress (docs/jobs.md#progress): a bar for a percentage, the object's JSON otherwise. */
export function ProgressView({ progress, running }: { progress: JobProgress | null | undefined; running: boolean }) {
  if (progress === null || progress === undefined) return null;
  if (typeof progress === "number") {
    return (
      <div className="progress-row" data-progress={progress}>
        <progress max={100} value={progress} aria-label={`progress: ${progress}%`} />
        <span>{progress}%</span>
        {running ? <span className="muted"> · live</span> : null}
      </div>
    );
  }
  return (
    <pre className="code-block" aria-label="progress" data-progress="object">
      {JSON.stringify(progress, null, 2)}
    </pre>
  );
}

/** Each attempt as a timeline, newest first: when it started, how long it ran and where, how it ended, its lines. */
export function AttemptTimeline({ attempts }: { attempts: AttemptInfo[] }) {
  if (attempts.length === 0) return <p className="muted">No attempt has ended yet.</p>;
  return (
    <ol className="timeline" aria-label="attempts">
      {[...attempts].reverse().map((a, i) => (
        <li key={`${a.attempt}-${a.startedAt}-${i}`} className="timeline-item" data-attempt={a.attempt} data-outcome={a.outcome}>
          <div className="row">
            <Badge tone={OUTCOME_TONE[a.outcome]}>{a.outcome}</Badge>
            <span>attempt {a.attempt}</span>
            <span className="muted">
              started <RelativeTime iso={a.startedAt} />, ran {formatDuration(a.durationMs)} on <code>{a.workerId}</code>
            </span>
          </div>
          {a.error ? (
            <div className="error-text">
              {a.error.class}: {a.error.message}
            </div>
          ) : null}
          {a.progress !== undefined ? (
            <div className="muted">last progress: {typeof a.progress === "number" ? `${a.progress}%` : JSON.stringify(a.progress)}</div>
          ) : null}
          <LogLines lines={a.logs} dropped={a.logsDropped} />
        </li>
      ))}
    </ol>
  );
}

/** The lines a handler logged with tools.log in one attempt (docs/jobs.md#logs). */
function LogLines({ lines, dropped }: { lines: JobLogLine[]; dropped?: number | undefined }) {
  if (lines.length === 0 && !dropped) return null;
  return (
    <details open={lines.length <= 20}>
      <summary>
        {lines.length} log {lines.length === 1 ? "line" : "lines"}
        {dropped ? ` (${dropped} more not kept)` : ""}
      </summary>
      <table className="log-lines" aria-label="log lines">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Level</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {lines.map((line, i) => (
            <tr key={i} data-log-level={line.level}>
              <td className="muted">
                <time dateTime={line.at}>{line.at.slice(11, 23)}</time>
              </td>
              <td>
                <Badge tone={line.level === "error" ? "bad" : line.level === "warn" ? "warn" : "neutral"}>{line.level}</Badge>
              </td>
              <td>
                {line.message}
                {line.fields !== undefined ? <code className="muted"> {JSON.stringify(line.fields)}</code> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
