"use client";
import { mergeTraces, traceRequestId, type TraceEntry, type TraceView } from "@jfast/runtime/admin";
import { useQueries } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Badge, type Tone } from "~/components/badge";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { EmptyState, Loading } from "~/components/empty-state";
import { JobDetail } from "~/components/job-detail";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { useServices, useTRPC } from "~/trpc/provider";

const OUTCOME_TONE: Record<string, Tone> = {
  completed: "ok",
  delivered: "ok",
  published: "info",
  running: "info",
  ready: "info",
  scheduled: "warn",
  waiting: "warn",
  pending: "warn",
  failed: "bad",
  dead: "bad",
};

const KIND_LABEL: Record<TraceEntry["kind"], string> = {
  job: "job",
  attempt: "attempt",
  event: "event",
  subscriber: "subscriber job",
  flow: "flow",
  outbox: "outbox row",
  kafka: "Kafka hop",
};

/**
 * One request's timeline across every service the dashboard knows (docs/dashboard.md#timeline): each service's
 * trace.get share, asked by the id typed; a service that found the id as a job or flow names the request, and the
 * services that did not are asked again by that request id. Joined into one waterfall, oldest first.
 */
export function Timeline({ initialId }: { initialId: string }) {
  const services = useServices();
  const trpc = useTRPC();
  const router = useRouter();
  const [draft, setDraft] = useState(initialId);
  const [id, setId] = useState(initialId);
  const [open, setOpen] = useState<{ service: string; id: string } | null>(null);

  const first = useQueries({ queries: services.map((s) => ({ ...trpc(s).trace.get.queryOptions({ id }), enabled: id !== "" })) });
  const answered = first.flatMap((q) => (q.data ? [q.data as TraceView] : []));
  const requestId = answered.length > 0 ? traceRequestId(answered) : null;
  // The services that took the id for a request id although another found it as a job or flow: asked by the request.
  const again = services.map((_, i) => requestId !== null && requestId !== id && first[i]?.data?.matched === "request");
  const second = useQueries({
    queries: services.map((s, i) => ({ ...trpc(s).trace.get.queryOptions({ id: requestId ?? id }), enabled: Boolean(again[i]) })),
  });
  const views = services.flatMap((_, i) => {
    const view = (again[i] ? second[i]?.data : first[i]?.data) as TraceView | undefined;
    return view ? [view] : [];
  });
  const pending = services.some((_, i) => (again[i] ? second[i]?.isPending : first[i]?.isPending && id !== ""));
  const failures = services.flatMap((s, i) => {
    const error = (again[i] ? second[i]?.error : null) ?? first[i]?.error;
    return error ? [{ service: s, error }] : [];
  });
  const merged = mergeTraces(views);
  const start = merged.startedAt ? Date.parse(merged.startedAt) : 0;
  const span = merged.finishedAt ? Math.max(1, Date.parse(merged.finishedAt) - start) : 1;

  return (
    <div className="stack">
      <p className="muted">
        Everything one request led to, in every service this dashboard knows: its jobs and their failed attempts, flows, events and the subscriber jobs that
        delivered them, outbox rows and the hops to Kafka, and the jobs other services ran because of it. Give a request id, or the id of one of its jobs or flows.
      </p>
      <form
        className="row"
        role="search"
        aria-label="Find a request"
        onSubmit={(event) => {
          event.preventDefault();
          const next = draft.trim();
          setId(next);
          router.replace(next ? `/timeline?id=${encodeURIComponent(next)}` : "/timeline");
        }}
      >
        <label className="field">
          Request, job or flow id
          <input className="input" name="id" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="req-5f0c… or a job id" size={44} />
        </label>
        <Button type="submit" variant="primary">Show timeline</Button>
      </form>

      {failures.map((f) => (
        <QueryError key={f.service} service={f.service} procedure="trace.get" error={f.error} what="its share of the timeline" />
      ))}
      {id === "" ? <EmptyState title="No request chosen">Type an id above, or open a job or a flow and follow its Timeline link.</EmptyState> : null}
      {id !== "" && pending && merged.entries.length === 0 ? <Loading what="the timeline" /> : null}
      {id !== "" && !pending && merged.entries.length === 0 && failures.length === 0 ? (
        <EmptyState title="Nothing recorded">No service recorded a job, flow or request with the id {id}.</EmptyState>
      ) : null}

      {merged.entries.length > 0 ? (
        <>
          <dl className="kv" data-timeline-summary>
            <dt>Request</dt>
            <dd>{merged.requestId ? <code>{merged.requestId}</code> : <span className="muted">none (the job or flow was made outside a request)</span>}</dd>
            <dt>Services</dt>
            <dd>{[...new Set(merged.entries.map((e) => e.service))].join(", ")}</dd>
            <dt>Entries</dt>
            <dd>{merged.entries.length}</dd>
            <dt>Span</dt>
            <dd>
              {span} ms <span className="muted">from {merged.startedAt}</span>
            </dd>
          </dl>
          {merged.notes.length > 0 ? (
            <div className="alert alert-info" role="status" data-timeline-notes>
              <strong>Partial:</strong>
              <ul>
                {merged.notes.map((note) => (
                  <li key={note}>{note}</li>
                ))}
              </ul>
            </div>
          ) : null}
          <Table<TraceEntry>
            label="Timeline"
            rows={merged.entries}
            rowKey={(e) => `${e.service}:${e.kind}:${e.id}`}
            columns={[
              { key: "at", header: "At", numeric: true, cell: (e) => `+${Date.parse(e.startedAt) - start} ms` },
              { key: "service", header: "Service", cell: (e) => e.service },
              { key: "kind", header: "Kind", cell: (e) => <span className={e.parentId ? "timeline-child" : undefined}>{KIND_LABEL[e.kind]}</span> },
              { key: "name", header: "Name", cell: (e) => <EntryName entry={e} onOpen={setOpen} /> },
              { key: "outcome", header: "Outcome", cell: (e) => <Badge tone={OUTCOME_TONE[e.outcome] ?? "neutral"}>{e.outcome}</Badge> },
              { key: "took", header: "Took", numeric: true, cell: (e) => (e.durationMs === null ? <span className="muted">—</span> : `${e.durationMs} ms`) },
              { key: "bar", header: "Waterfall", cell: (e) => <Bar entry={e} start={start} span={span} /> },
            ]}
          />
        </>
      ) : null}

      {open ? (
        <Drawer title={`${open.service} · ${open.id}`} onClose={() => setOpen(null)}>
          <JobDetail service={open.service} id={open.id} />
        </Drawer>
      ) : null}
    </div>
  );
}

function EntryName({ entry, onOpen }: { entry: TraceEntry; onOpen: (job: { service: string; id: string }) => void }) {
  const error = entry.error ? <div className="error-text">{entry.error}</div> : null;
  if (entry.kind === "job" || entry.kind === "subscriber") {
    return (
      <>
        <Button small onClick={() => onOpen({ service: entry.service, id: entry.id })} title={`Open job ${entry.id}`}>
          {entry.name}
        </Button>
        {error}
      </>
    );
  }
  if (entry.kind === "flow") {
    return <Link href={`/flows/${encodeURIComponent(entry.id)}?service=${encodeURIComponent(entry.service)}`}>{entry.name}</Link>;
  }
  return (
    <>
      <code>{entry.name}</code>
      {error}
    </>
  );
}

/** Where the entry sits in the request's span: a bar from its start to its finish, a tick for a point in time. */
function Bar({ entry, start, span }: { entry: TraceEntry; start: number; span: number }) {
  const from = Date.parse(entry.startedAt) - start;
  const until = entry.finishedAt ? Date.parse(entry.finishedAt) - start : span;
  const left = (100 * from) / span;
  const width = Math.max(0.5, (100 * (until - from)) / span);
  const tone = OUTCOME_TONE[entry.outcome] ?? "neutral";
  return (
    <div className="waterfall" title={`${entry.startedAt} → ${entry.finishedAt ?? "not finished"}`}>
      <div className={`waterfall-bar waterfall-${tone}${entry.finishedAt ? "" : " waterfall-open"}`} style={{ left: `${Math.min(left, 99.5)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.5))}%` }} />
    </div>
  );
}
