"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { EmptyState, Loading } from "~/components/empty-state";
import { FlowGraph, MAX_DRAWN_STEPS, stateTone } from "~/components/flow-graph";
import { layoutFlow } from "~/components/flow-layout";
import { JobDetail } from "~/components/job-detail";
import { formatDuration } from "~/components/job-life";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { useServiceTRPC } from "~/trpc/provider";
import { REFRESH_MS } from "~/trpc/query-client";
import type { FlowStepItem } from "~/trpc/types";
import { FlowActionDialog, type FlowAction } from "./flow-action-dialog";

const FINISHED = new Set(["completed", "dead", "cancelled"]);

/**
 * One flow: its state, its graph (each step opens its job), its steps as a table, Retry on a dead step and Cancel
 * flow, both confirmed and audited. Re-read every few seconds while it runs, with the live updates otherwise.
 */
export function FlowDetail({ service, id }: { service: string; id: string }) {
  const trpc = useServiceTRPC(service);
  const flowQuery = useQuery({
    ...trpc.flows.get.queryOptions({ id }),
    enabled: service !== "",
    refetchInterval: (query) => (query.state.data?.flow?.state === "running" ? REFRESH_MS : false),
  });
  const [open, setOpen] = useState<string | null>(null);
  const [pending, setPending] = useState<FlowAction | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const operator = useRoles(service ? [service] : [])[service] === "operator";
  const may = useMayAct();
  const view = flowQuery.data;
  const flow = view?.flow ?? null;

  if (!service) return <EmptyState title="No service named">Open a flow from the Flows page.</EmptyState>;
  if (flowQuery.error) return <QueryError service={service} procedure="flows.get" error={flowQuery.error} what="its flows" />;
  if (flowQuery.isPending) return <Loading what="the flow" />;
  if (view && !view.supported) return <div className="alert alert-info" role="status"><strong>This queue keeps no flows.</strong> {view.reason}</div>;
  if (!flow) return <EmptyState title={`No flow ${id} on ${service}`}>It may have been pruned with its jobs (retention), or belong to another service.</EmptyState>;

  // The table in the graph's order: by column (depth), then row.
  const place = new Map(layoutFlow(Object.values(flow.steps)).steps.map((p) => [p.name, p.column * 100_000 + p.row]));
  const steps = (Object.values(flow.steps) as FlowStepItem[]).sort((a, b) => place.get(a.name)! - place.get(b.name)!);
  const unfinished = steps.filter((s) => !FINISHED.has(s.state)).length;
  const selected = open ? flow.steps[open] : undefined;
  const title = flow.name ?? (flow.kind === "batch" ? "Batch" : "Flow");
  const retryButton = (step: FlowStepItem, small = true) =>
    step.state === "dead" && may.act ? (
      <Button small={small} variant="primary" disabled={!operator} title={operator ? undefined : "needs an operator"} aria-label={`Retry step ${step.name}`}
        onClick={() => setPending({ kind: "retry", service, flowId: flow.id, step: step.name, jobId: step.jobId })}>
        Retry
      </Button>
    ) : null;

  return (
    <div className="stack">
      <div className="row">
        <h1 style={{ margin: 0 }}>{title}</h1>
        <Badge tone={stateTone(flow.state)}>{flow.state}</Badge>
        <span style={{ flex: 1 }} />
        {may.act && (flow.state === "running" || flow.state === "failed") && unfinished > 0 ? (
          <Button variant="danger" disabled={!operator} title={operator ? undefined : "needs an operator"} onClick={() => setPending({ kind: "cancel", service, flowId: flow.id, name: title, unfinished })}>
            Cancel flow
          </Button>
        ) : null}
      </div>
      <p className="muted" data-flow-summary>
        <code>{flow.id}</code> on <strong>{service}</strong> ({flow.queue} queue) · {flow.completed} of {flow.total} steps completed{flow.dead > 0 ? `, ${flow.dead} dead` : ""} · created{" "}
        <RelativeTime iso={flow.createdAt} />
        {flow.finishedAt ? <> · finished <RelativeTime iso={flow.finishedAt} /></> : null}
        {flow.tenantId ? <> · tenant {flow.tenantId}</> : null} · <Link href={`/timeline?id=${encodeURIComponent(flow.id)}`} data-timeline-link>Timeline</Link>
      </p>
      {notice ? <p className="alert alert-info" role="status">{notice}</p> : null}

      {steps.length <= MAX_DRAWN_STEPS ? (
        <FlowGraph label={`Graph of ${title}: ${steps.length} steps`} steps={steps} onOpen={setOpen} />
      ) : (
        <p className="alert alert-info" role="status">{steps.length} steps are too many to draw; the table lists them.</p>
      )}

      <Table<FlowStepItem>
        label="Steps"
        rows={steps}
        rowKey={(s) => s.name}
        columns={[
          { key: "step", header: "Step", cell: (s) => <strong>{s.name}</strong> },
          { key: "state", header: "State", cell: (s) => <Badge tone={stateTone(s.state)}>{s.state}</Badge> },
          { key: "after", header: "After", cell: (s) => (s.after.length ? s.after.join(", ") : <span className="muted">—</span>) },
          { key: "task", header: "Task", cell: (s) => <code>{s.task}</code> },
          { key: "attempts", header: "Attempts", numeric: true, cell: (s) => s.attempts },
          // Its last attempt's run (docs/jobs.md#timing); none before it ran, nor on RabbitMQ's flow store.
          { key: "duration", header: "Duration", numeric: true, cell: (s) => (s.durationMs === undefined ? <span className="muted">—</span> : <span data-step-duration={s.durationMs}>{formatDuration(s.durationMs)}</span>) },
          {
            key: "outcome",
            header: "Result or error",
            cell: (s) =>
              s.error ? (
                <><Badge tone="bad">{s.error.class}</Badge> <span className="error-text">{s.error.message}</span></>
              ) : "result" in s ? (
                <code>{JSON.stringify(s.result)}</code>
              ) : (
                <span className="muted">—</span>
              ),
          },
          {
            key: "actions",
            header: <span className="sr-only">Actions</span>,
            cell: (s) => (
              <div className="row" style={{ flexWrap: "nowrap" }}>
                <Button small onClick={() => setOpen(s.name)} aria-label={`Job of step ${s.name}`}>Job</Button>
                {retryButton(s)}
              </div>
            ),
          },
        ]}
      />

      {selected ? (
        <Drawer title={`Step ${selected.name} · ${selected.task}`} onClose={() => setOpen(null)}>
          <div className="stack">
            <div className="row">
              <Badge tone={stateTone(selected.state)}>{selected.state}</Badge>
              {selected.after.length ? <span className="muted">after {selected.after.join(", ")}</span> : null}
              <span style={{ flex: 1 }} />
              {retryButton(selected, false)}
            </div>
            <JobDetail service={service} id={selected.jobId} />
          </div>
        </Drawer>
      ) : null}
      {pending ? <FlowActionDialog action={pending} onClose={() => { setPending(null); setOpen(null); }} onDone={setNotice} /> : null}
    </div>
  );
}
