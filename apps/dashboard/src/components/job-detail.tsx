"use client";
import type { AttemptError, RetryMark } from "@jfast/runtime/admin";
import Link from "next/link";
import { useState, type ReactNode } from "react";
import { useMayAct } from "~/trpc/hooks";
import { Button } from "./button";
import { EditJob } from "./edit-job";
import { useQuery } from "@tanstack/react-query";
import { useServiceTRPC, useTraceUrl } from "~/trpc/provider";
import { Badge } from "./badge";
import { EmptyState, ErrorState, Loading } from "./empty-state";
import { RelativeTime } from "./time";
import { AttemptTimeline, formatDuration, ProgressView, RUNNING_REFRESH_MS } from "./job-life";

/** `waiting`: a flow step whose parents have not all completed (docs/flows.md#states). */
const STATE_TONE = { waiting: "warn", ready: "info", running: "info", completed: "ok", dead: "bad", cancelled: "neutral", expired: "neutral" } as const;

/** One job: where it stands, its payload (redacted by the service), its result, and every attempt's error with its stack. */
export function JobDetail({ service, id }: { service: string; id: string }) {
  const trpc = useServiceTRPC(service);
  const may = useMayAct();
  const [editing, setEditing] = useState(false);
  const [edited, setEdited] = useState<string | null>(null);
  // A running job is read every second for its progress, which no job event announces (docs/jobs.md#progress).
  const query = useQuery(
    trpc.jobs.get.queryOptions({ id }, { refetchInterval: (q) => (q.state.data?.job?.state === "running" ? RUNNING_REFRESH_MS : false) }),
  );
  if (query.isPending) return <Loading what="the job" />;
  if (query.isError) return <ErrorState title="Could not load the job." error={query.error} />;
  const job = query.data.job;
  if (!job) {
    const why = !query.data.enabled
      ? `${service} does not run a queue.`
      : (query.data.notFoundReason ?? `${service} has no job ${id} (it may have completed and been removed, or been discarded).`);
    return <EmptyState title={query.data.notFoundReason ? "Cannot look this job up" : "No such job"}>{why}</EmptyState>;
  }
  return (
    <div className="stack" data-job={job.id}>
      <dl className="kv">
        <dt>Service</dt>
        <dd>{service}</dd>
        <dt>Id</dt>
        <dd><code>{job.id}</code></dd>
        <dt>Task</dt>
        <dd><code>{job.task}</code></dd>
        <dt>State</dt>
        <dd><Badge tone={STATE_TONE[job.state]}>{job.state}</Badge></dd>
        <dt>Priority</dt>
        <dd data-priority={job.priority}>{job.priority} <span className="muted">(0 runs first, 9 last)</span></dd>
        <dt>Attempts</dt>
        <dd>
          {job.attempts} of {job.maxAttempts ?? "default"}
          {job.retries.length ? <span className="muted"> since it was retried ({job.retries.length === 1 ? "once" : `${job.retries.length} times`})</span> : null}
        </dd>
        <dt>Tenant</dt>
        <dd>{job.tenantId ?? <span className="muted">none</span>}</dd>
        <dt>Request</dt>
        <dd>
          {job.requestId ?? <span className="muted">none</span>} · <Link href={`/timeline?id=${encodeURIComponent(job.id)}`} data-timeline-link>Timeline</Link>
        </dd>
        <dt>Trace</dt>
        <dd><TraceLink traceId={job.traceId} /></dd>
        <dt>Created</dt>
        <dd><RelativeTime iso={job.createdAt} /></dd>
        {job.waitMs !== null ? (
          <>
            <dt>Waited</dt>
            <dd data-wait-ms={job.waitMs}>{formatDuration(job.waitMs)} <span className="muted">from available to its first start</span></dd>
          </>
        ) : null}
        {job.finishedAt !== null && job.state !== "running" ? (
          <>
            <dt>Finished</dt>
            <dd data-duration-ms={job.durationMs ?? ""}>
              <RelativeTime iso={job.finishedAt} /> <span className="muted">after {formatDuration(job.durationMs)}</span>
            </dd>
          </>
        ) : null}
        {job.unique ? (
          <>
            <dt>Unique key</dt>
            <dd data-unique-key>
              <code>{job.unique.key}</code>{" "}
              <span className="muted">
                {job.unique.periodMs !== null ? `held for ${job.unique.periodMs} ms from its enqueue` : `held while ${(job.unique.states ?? []).join(", ")}`}
              </span>
            </dd>
          </>
        ) : null}
        {job.limit ? (
          <>
            <dt>Limits</dt>
            <dd data-job-limit>
              {[
                job.limit.concurrency !== null ? `concurrency ${job.limit.concurrency}` : null,
                job.limit.rateLimit !== null ? `${job.limit.rateLimit.max} per ${job.limit.rateLimit.perMs} ms` : null,
              ]
                .filter(Boolean)
                .join(", ")}
              {job.limit.waitsOn ? <span className="muted"> — waits on {job.limit.waitsOn}</span> : null}
            </dd>
          </>
        ) : null}
        <dt>{job.state === "dead" ? "Died" : "Available"}</dt>
        <dd><RelativeTime iso={job.state === "dead" ? job.diedAt : job.availableAt} /></dd>
        {job.lockedBy ? (
          <>
            <dt>Leased by</dt>
            <dd>{job.lockedBy} until <RelativeTime iso={job.lockedUntil} /></dd>
          </>
        ) : null}
      </dl>
      {job.progress !== null ? (
        <div data-job-progress>
          <h2>Progress</h2>
          <ProgressView progress={job.progress} running={job.state === "running"} />
        </div>
      ) : null}
      <div>
        <h2>Payload</h2>
        {isEncrypted(job.payload) ? (
          <p className="muted" aria-label="payload" data-encrypted-payload={job.payload.kid ?? ""}>
            Encrypted{job.payload.kid ? ` with key ${job.payload.kid}` : ""}: shown only to operators, by a service that holds the
            key.
          </p>
        ) : (
          <pre className="code-block" aria-label="payload">{JSON.stringify(job.payload, null, 2)}</pre>
        )}
      </div>
      {job.state === "ready" && may.act ? (
        <div data-job-edit>
          {edited ? <p className="alert alert-info" role="status">{edited}</p> : null}
          {editing ? (
            <EditJob
              service={service}
              job={job}
              payloadReadable={!isEncrypted(job.payload)}
              onDone={(text) => {
                setEdited(text);
                setEditing(false);
              }}
            />
          ) : (
            <Button onClick={() => { setEdited(null); setEditing(true); }}>Edit</Button>
          )}
        </div>
      ) : null}
      {"result" in job || job.resultOmitted !== undefined ? (
        <div>
          <h2>Result</h2>
          {job.resultOmitted !== undefined ? (
            <p className="muted" aria-label="result">Not stored: {job.resultOmitted}</p>
          ) : (
            <pre className="code-block" aria-label="result">{JSON.stringify(job.result, null, 2)}</pre>
          )}
        </div>
      ) : null}
      <div data-job-timeline>
        <h2>Attempt timeline</h2>
        <AttemptTimeline attempts={job.attemptDetails} />
      </div>
      <div>
        <h2>Attempts ({job.errors.length} failed)</h2>
        {job.errors.length === 0 ? <p className="muted">No failed attempts.</p> : null}
        {history(job.errors, job.retries)}
      </div>
    </div>
  );
}

/** Failed attempts and the retries between them, newest first: each retry where the attempt count restarted. */
function history(errors: AttemptError[], retries: RetryMark[]): ReactNode[] {
  const items: ReactNode[] = [];
  errors.forEach((error, i) => {
    for (const mark of retries.filter((r) => r.afterErrors === i)) items.push(<Retried key={`retry-${i}-${mark.at}`} mark={mark} />);
    items.push(<Attempt key={`${error.attempt}-${error.at}`} error={error} />);
  });
  for (const mark of retries.filter((r) => r.afterErrors >= errors.length)) items.push(<Retried key={`retry-end-${mark.at}`} mark={mark} />);
  return items.reverse();
}

/** "Retried by olga (operator, via ops-dashboard) 5 min ago (attempts reset)"; unnamed when the audit trail does not know it. */
function Retried({ mark }: { mark: RetryMark }) {
  return (
    <div className="retry-mark" data-retry-mark={mark.actor ?? ""} role="note">
      {mark.actor ? (
        <>
          Retried by <strong>{mark.actor}</strong>
          <span className="muted"> ({mark.role}{mark.via ? `, via ${mark.via}` : ""})</span> <RelativeTime iso={mark.at} />
        </>
      ) : (
        <>Retried <span className="muted">(not in this service's audit trail: e.g. with jfast jobs retry)</span></>
      )}{" "}
      <span className="muted">· attempts reset</span>
    </div>
  );
}

/** The trace id, linked to the tracing UI when JFAST_DASHBOARD_TRACE_URL is set on the dashboard's server. */
export function TraceLink({ traceId }: { traceId: string | null }) {
  const template = useTraceUrl();
  if (!traceId) return <span className="muted">none (the job was enqueued outside a traced request)</span>;
  if (!template) return <code data-trace-id={traceId} title="set JFAST_DASHBOARD_TRACE_URL to link it to your tracing UI">{traceId}</code>;
  return (
    <a href={template.replaceAll("{traceId}", encodeURIComponent(traceId))} target="_blank" rel="noopener noreferrer" data-trace-id={traceId}>
      <code>{traceId}</code> <span className="sr-only">(opens the trace in a new tab)</span>
    </a>
  );
}

export function Attempt({ error }: { error: AttemptError }) {
  return (
    <div className="attempt">
      <div className="row">
        <Badge tone="bad">{error.class}</Badge>
        <span className="muted">attempt {error.attempt}</span>
        {error.reason ? <Badge tone="neutral">{error.reason}</Badge> : null}
        <span className="muted"><RelativeTime iso={error.at} /></span>
      </div>
      <div className="error-text">{error.message}</div>
      {error.stack ? (
        <details>
          <summary>Stack trace</summary>
          <pre className="code-block">{error.stack}</pre>
        </details>
      ) : null}
    </div>
  );
}

/** The service's answer for a payload stored encrypted that this person may not read, or it cannot decrypt. */
function isEncrypted(payload: unknown): payload is { encrypted: true; kid?: string } {
  return typeof payload === "object" && payload !== null && (payload as { encrypted?: unknown }).encrypted === true && Object.keys(payload).every((k) => k === "encrypted" || k === "kid");
}
