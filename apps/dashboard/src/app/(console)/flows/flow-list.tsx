"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { EmptyState, Loading } from "~/components/empty-state";
import { stateTone } from "~/components/flow-graph";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useServiceTRPC, useServices } from "~/trpc/provider";
import type { FlowListItem, FlowListPage, FlowStateName } from "~/trpc/types";

const STATES: Array<{ state: FlowStateName | undefined; label: string }> = [
  { state: undefined, label: "All" },
  { state: "running", label: "Running" },
  { state: "failed", label: "Failed" },
  { state: "completed", label: "Completed" },
  { state: "cancelled", label: "Cancelled" },
];

/** One service's flows, newest first, a bounded page at a time, by state and name (docs/dashboard.md#flows). */
export function FlowList({ initialService, initialState }: { initialService: string; initialState: string }) {
  const services = useServices();
  const [service, setService] = useState(services.includes(initialService) ? initialService : (services[0] ?? ""));
  const [state, setState] = useState<FlowStateName | undefined>(STATES.find((s) => s.state === initialState)?.state);
  const [draftName, setDraftName] = useState("");
  const [name, setName] = useState("");
  // The cursors of the pages shown so far: the last one is the page on screen (undefined: the first).
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const trpc = useServiceTRPC(service);
  const after = cursors.at(-1);
  const input = { limit: 50, ...(state ? { state } : {}), ...(name ? { name } : {}), ...(after ? { after } : {}) };
  const list = useQuery({ ...trpc.flows.list.queryOptions(input), enabled: service !== "" });
  const data: FlowListPage | undefined = list.data;
  const restart = () => setCursors([undefined]);
  const several = data ? data.items.some((f) => f.queue !== "default") : false;

  return (
    <div className="stack">
      <p className="muted">
        Jobs that run after other jobs, as their service keeps them. Open a flow to see it drawn as its graph, a step&apos;s job, and to retry a dead step or cancel the
        flow.
      </p>
      <form
        className="row"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          setName(draftName.trim());
          restart();
        }}
      >
        <label className="field">
          Service
          <select className="input" value={service} onChange={(e) => { setService(e.target.value); restart(); }}>
            {services.map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label className="field">
          Flow name
          <input className="input" value={draftName} onChange={(e) => setDraftName(e.target.value)} placeholder="any name" />
        </label>
        <Button type="submit">Apply</Button>
      </form>

      <div className="tabs" role="group" aria-label="State">
        {STATES.map((s) => (
          <button key={s.label} type="button" aria-pressed={state === s.state} onClick={() => { setState(s.state); restart(); }}>
            {s.label}
          </button>
        ))}
      </div>

      {list.error ? <QueryError service={service} procedure="flows.list" error={list.error} what="its flows" /> : null}
      {data && !data.enabled ? <EmptyState title="No queue">This service does not run a queue.</EmptyState> : null}
      {data && data.enabled && !data.supported ? (
        <div className="alert alert-info" role="status" data-unsupported="flows">
          <strong>This queue keeps no flows.</strong> {data.reason}
        </div>
      ) : null}

      {data?.supported ? (
        <>
          <span className="muted">
            Page {cursors.length}: {data.items.length} flow{data.items.length === 1 ? "" : "s"}
            {data.nextCursor ? " (more follow)" : ""}
          </span>
          <Table<FlowListItem>
            label="Flows"
            rows={data.items}
            rowKey={(f) => f.id}
            empty={<EmptyState title="No flows on this page">{data.nextCursor ? "This page's window held none that match; the next page reads on." : "Nothing matches."}</EmptyState>}
            columns={[
              {
                key: "name",
                header: "Flow",
                cell: (f) => (
                  <Link href={`/flows/${encodeURIComponent(f.id)}?service=${encodeURIComponent(service)}`} aria-label={`Flow ${f.name ?? f.id}`}>
                    {f.name ?? (f.kind === "batch" ? "(batch)" : "(no name)")}
                  </Link>
                ),
              },
              { key: "id", header: "Id", cell: (f) => <code>{f.id}</code> },
              { key: "state", header: "State", cell: (f) => <Badge tone={stateTone(f.state)}>{f.state}</Badge> },
              { key: "steps", header: "Steps completed", numeric: true, cell: (f) => `${f.completed}/${f.total}` },
              { key: "dead", header: "Dead", numeric: true, cell: (f) => (f.dead > 0 ? <span className="error-text">{f.dead}</span> : "0") },
              { key: "created", header: "Created", cell: (f) => <RelativeTime iso={f.createdAt} /> },
              { key: "finished", header: "Finished", cell: (f) => <RelativeTime iso={f.finishedAt} /> },
              { key: "timeline", header: "Timeline", cell: (f) => <Link href={`/timeline?id=${encodeURIComponent(f.id)}`} data-timeline-link>Timeline</Link> },
              ...(several ? [{ key: "queue", header: "Queue", cell: (f: FlowListItem) => <code>{f.queue}</code> }] : []),
            ]}
          />
          <div className="row">
            <Button disabled={cursors.length === 1} onClick={restart}>First page</Button>
            <Button disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</Button>
            <Button variant="primary" disabled={!data.nextCursor} onClick={() => setCursors([...cursors, data.nextCursor!])}>Next page</Button>
          </div>
        </>
      ) : list.isPending && service ? (
        <Loading what="flows" />
      ) : null}
    </div>
  );
}
