"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { TaskInput } from "~/components/task-input";
import { Drawer } from "~/components/drawer";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { EstimatedCount } from "~/components/estimated-count";
import { JobDetail } from "~/components/job-detail";
import { formatDuration } from "~/components/job-life";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { useServiceTRPC, useServices } from "~/trpc/provider";
import type { JobActionName, JobListItem, JobListView, ListStateName } from "~/trpc/types";
import { ActionDialog, type PendingAction } from "./action-dialog";

const STATES: Array<{ state: ListStateName; label: string; count?: "ready" | "scheduled" | "running" | "dead" }> = [
  { state: "ready", label: "Ready", count: "ready" },
  { state: "scheduled", label: "Scheduled", count: "scheduled" },
  { state: "running", label: "Running", count: "running" },
  { state: "completed", label: "Completed" },
  { state: "dead", label: "Dead", count: "dead" },
  { state: "cancelled", label: "Cancelled" },
  { state: "expired", label: "Expired" },
];

export const ACTION_LABEL: Record<JobActionName, string> = { cancel: "Cancel", runNow: "Run now", delete: "Delete" };

interface Filter {
  task: string;
  tenantId: string;
  id: string;
}

/** One service's queue, one state at a time: tabs with counts, newest/oldest, filters, keyset pages, actions. */
export function JobStates({ initialService, initialState }: { initialService: string; initialState: string }) {
  const services = useServices();
  const [service, setService] = useState(services.includes(initialService) ? initialService : (services[0] ?? ""));
  const [state, setState] = useState<ListStateName>(STATES.some((s) => s.state === initialState) ? (initialState as ListStateName) : "ready");
  const [order, setOrder] = useState<"newest" | "oldest">("newest");
  const [draft, setDraft] = useState<Filter>({ task: "", tenantId: "", id: "" });
  const [filter, setFilter] = useState<Filter>(draft);
  // The cursors of the pages shown so far: the last one is the page on screen (undefined: the first).
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [open, setOpen] = useState<JobListItem | null>(null);
  const [pending, setPending] = useState<PendingAction | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const roles = useRoles(service ? [service] : []);
  const operator = roles[service] === "operator";
  // Viewers see no action, operators act on one job, admins also on all matching (the server refuses the rest).
  const may = useMayAct();
  const trpc = useServiceTRPC(service);
  const after = cursors.at(-1);
  const input = { state, order, limit: 50, ...(after ? { after } : {}), ...clean(filter) };
  const list = useQuery({ ...trpc.jobs.list.queryOptions(input), enabled: service !== "" });
  const data: JobListView | undefined = list.data;
  const restart = () => setCursors([undefined]);

  return (
    <div className="stack">
      <p className="muted">
        Every state of one service's queue, a bounded page at a time. Search one job by id on <Link href="/jobs">Jobs</Link>; retry and discard dead
        letters in bulk on <Link href="/dead-letters">Dead letters</Link>.
      </p>
      <form
        className="row"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter(draft);
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
          Task
          <TaskInput services={[service]} value={draft.task} onChange={(task) => setDraft({ ...draft, task })} />
        </label>
        <label className="field">
          Tenant
          <input className="input" value={draft.tenantId} onChange={(e) => setDraft({ ...draft, tenantId: e.target.value })} placeholder="any tenant" />
        </label>
        <label className="field">
          Job id
          <input className="input" value={draft.id} onChange={(e) => setDraft({ ...draft, id: e.target.value })} placeholder="exact id" />
        </label>
        <Button type="submit">Apply</Button>
        <span style={{ flex: 1 }} />
        <div className="tabs" role="group" aria-label="Order">
          {(["newest", "oldest"] as const).map((o) => (
            <button key={o} type="button" aria-pressed={order === o} onClick={() => { setOrder(o); restart(); }}>
              {o === "newest" ? "Newest first" : "Oldest first"}
            </button>
          ))}
        </div>
      </form>

      <div className="tabs" role="group" aria-label="State">
        {STATES.map((s) => (
          <button key={s.state} type="button" aria-pressed={state === s.state} onClick={() => { setState(s.state); restart(); }}>
            {s.label}
            {s.count && data?.counts ? <span className="muted" data-count={s.state}> <EstimatedCount n={data.counts[s.count]} estimated={data.counts.estimated} /></span> : null}
          </button>
        ))}
      </div>

      {notice ? <p className="alert alert-info" role="status">{notice}</p> : null}
      {list.error ? <ErrorState title={`${service}:`} error={list.error} /> : null}
      {data && !data.enabled ? <EmptyState title="No queue">This service does not run a queue.</EmptyState> : null}
      {data && data.enabled && !data.supported ? (
        <div className="alert alert-info" role="status" data-unsupported={state}>
          <strong>This queue cannot list {state} jobs.</strong> {data.reason}
        </div>
      ) : null}

      {data?.supported ? (
        <>
          <div className="row">
            <span className="muted">
              Page {cursors.length}: {data.items.length} job{data.items.length === 1 ? "" : "s"}
              {data.next ? " (more follow)" : ""}
              {data.exact ? "" : " — positions in a moving list: a job may be skipped or shown twice across pages"}
            </span>
            <span style={{ flex: 1 }} />
            {data.actions
              .filter((a) => may.bulk && (state === "ready" || state === "scheduled" || state === "running"))
              .map((a) => (
                <Button key={a} variant={a === "runNow" ? "primary" : "danger"} disabled={!operator} title={operator ? undefined : "needs an operator"}
                  onClick={() => setPending({ kind: "bulk", action: a, service, state: state as "ready" | "scheduled" | "running", filter: { ...(filter.task.trim() ? { task: filter.task.trim() } : {}), ...(filter.tenantId.trim() ? { tenantId: filter.tenantId.trim() } : {}) } })}>
                  {ACTION_LABEL[a]} all matching…
                </Button>
              ))}
          </div>
          <Table<JobListItem>
            label={`${state} jobs`}
            rows={data.items}
            rowKey={(j) => j.id}
            empty={<EmptyState title={`No ${state} jobs on this page`}>{data.next ? "This page's window held none that match; the next page reads on." : "Nothing matches."}</EmptyState>}
            columns={[
              { key: "task", header: "Task", cell: (j) => <code>{j.task}</code> },
              { key: "id", header: "Id", cell: (j) => <code>{j.id}</code> },
              { key: "tenant", header: "Tenant", cell: (j) => j.tenantId ?? <span className="muted">—</span> },
              { key: "attempts", header: "Attempts", numeric: true, cell: (j) => `${j.attempts}/${j.maxAttempts ?? "?"}` },
              { key: "time", header: timeHeader(state), cell: (j) => <RelativeTime iso={timeOf(state, j)} /> },
              state === "running"
                ? { key: "progress", header: "Progress", cell: (j) => (j.progress === null ? <span className="muted">—</span> : typeof j.progress === "number" ? `${j.progress}%` : <code>{JSON.stringify(j.progress)}</code>) }
                : { key: "duration", header: "Duration", numeric: true, cell: (j) => (j.durationMs === null ? <span className="muted">—</span> : formatDuration(j.durationMs)) },
              {
                key: "error",
                header: "Last error",
                cell: (j) => (j.errors.at(-1) ? <><Badge tone="bad">{j.errors.at(-1)!.class}</Badge> <span className="error-text">{j.errors.at(-1)!.message}</span></> : <span className="muted">—</span>),
              },
              {
                key: "actions",
                header: <span className="sr-only">Actions</span>,
                cell: (j) => (
                  <div className="row" style={{ flexWrap: "nowrap" }}>
                    <Button small onClick={() => setOpen(j)} aria-label={`Details of ${j.id}`}>Details</Button>
                    {data.actions.filter(() => may.act).map((a) => (
                      <Button key={a} small variant={a === "runNow" ? "primary" : "danger"} disabled={!operator} title={operator ? undefined : "needs an operator"} aria-label={`${ACTION_LABEL[a]} ${j.id}`}
                        onClick={() => setPending({ kind: "one", action: a, service, id: j.id, task: j.task })}>
                        {ACTION_LABEL[a]}
                      </Button>
                    ))}
                    {state === "dead" ? <Link className="button button-small" href={`/dead-letters?service=${encodeURIComponent(service)}`}>Retry…</Link> : null}
                  </div>
                ),
              },
            ]}
          />
          <div className="row">
            <Button disabled={cursors.length === 1} onClick={restart}>First page</Button>
            <Button disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</Button>
            <Button variant="primary" disabled={!data.next} onClick={() => setCursors([...cursors, data.next!])}>Next page</Button>
          </div>
        </>
      ) : list.isPending && service ? (
        <Loading what={`${state} jobs`} />
      ) : null}

      {open ? (
        <Drawer title={`${open.task} · ${open.id}`} onClose={() => setOpen(null)}>
          <JobDetail service={service} id={open.id} />
        </Drawer>
      ) : null}
      {pending ? <ActionDialog action={pending} onClose={() => setPending(null)} onDone={setNotice} /> : null}
    </div>
  );
}

function clean(filter: Filter): { task?: string; tenantId?: string; id?: string } {
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v.trim() !== "").map(([k, v]) => [k, v.trim()]));
}

function timeHeader(state: ListStateName): string {
  return { ready: "Due", scheduled: "Due", running: "Lease until", completed: "Finished", dead: "Died", cancelled: "Created", expired: "Created" }[state];
}

function timeOf(state: ListStateName, job: JobListItem): string | null {
  if (state === "dead") return job.diedAt;
  if (state === "running") return job.lockedUntil;
  // A completed job's last attempt ended when it finished (docs/jobs.md#timing); the list is in that order.
  if (state === "completed") return job.finishedAt ?? job.createdAt;
  if (state === "cancelled" || state === "expired") return job.createdAt;
  return job.availableAt;
}
