"use client";
import { useIsMutating, useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { Card } from "~/components/card";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { TenantFilter } from "~/components/tenant-filter";
import { RelativeTime } from "~/components/time";
import type { TaskQueueView } from "~/trpc/types";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { useServiceTRPC, useServices, useTRPC } from "~/trpc/provider";
import { TenantDepths } from "./tenant-depths";

/** Depths per task on every service, and pausing a task (its jobs stay queued, no worker claims them). */
export function Queues({ initialTenant }: { initialTenant: string }) {
  const services = useServices();
  const roles = useRoles(services);
  const may = useMayAct();
  const [tenant, setTenant] = useState(initialTenant);
  const [notice, setNotice] = useState<{ tone: "bad" | "info"; text: string } | null>(null);
  const trpc = useTRPC();
  const queries = useQueries({ queries: services.map((s) => trpc(s).queues.list.queryOptions(tenant ? { tenant } : undefined)) });
  // One pause or resume at a time on the page.
  const toggling = useIsMutating({ predicate: (m) => isToggle(m.options.mutationKey) }) > 0;

  return (
    <div className="stack">
      <TenantFilter tenant={tenant} onChange={setTenant} initial={initialTenant} />
      {notice ? <p className={`alert alert-${notice.tone}`} role={notice.tone === "bad" ? "alert" : "status"}>{notice.text}</p> : null}
      {services.length === 0 ? <EmptyState title="No services configured" /> : null}
      {services.map((service, i) => {
        const q = queries[i]!;
        const operator = roles[service] === "operator";
        return (
          <Card
            key={service}
            title={service}
            label={`queues of ${service}`}
            actions={q.data ? <Badge tone="neutral" title="how the backend counts per task">{q.data.countsAre} counts</Badge> : null}
          >
            {q.isPending ? (
              <Loading what="queues" />
            ) : q.isError ? (
              <QueryError service={service} procedure="queues.list" error={q.error} what="depths per task and pausing" />
            ) : !q.data.enabled ? (
              <EmptyState title="No queue">{service} does not run a queue.</EmptyState>
            ) : (
              <div className="stack">
                {q.data.countsUnavailableReason ? <p className="alert alert-info" role="status">No counts per task: {q.data.countsUnavailableReason}</p> : null}
                {!q.data.pauseSupported ? <p className="alert alert-info" role="status">Pausing is not available here: {q.data.pauseUnsupportedReason ?? "the backend cannot hold a task's jobs back"}.</p> : null}
                <Table<TaskQueueView>
                  label={`Queues of ${service}`}
                  rows={q.data.tasks}
                  rowKey={(r) => r.task}
                  rowClass={(r) => (r.paused ? "row-paused" : undefined)}
                  empty={<EmptyState title="No tasks registered">{service} has no task handlers{tenant ? ` with jobs of tenant ${tenant}` : ""}.</EmptyState>}
                  columns={[
                    { key: "task", header: "Task", cell: (r) => <><code>{r.task}</code>{r.paused ? <> <Badge tone="warn">paused</Badge></> : null}</> },
                    { key: "module", header: "Module", cell: (r) => r.module ?? <span className="muted">—</span> },
                    { key: "ready", header: "Ready", numeric: true, cell: (r) => r.ready },
                    { key: "scheduled", header: "Scheduled", numeric: true, cell: (r) => r.scheduled },
                    { key: "running", header: "Running", numeric: true, cell: (r) => r.running },
                    { key: "dead", header: "Dead", numeric: true, cell: (r) => (r.dead > 0 ? <span className="error-text">{r.dead}</span> : 0) },
                    {
                      key: "state",
                      header: "State",
                      cell: (r) => (r.paused ? <span>paused by {r.pausedBy ?? "?"} <RelativeTime iso={r.pausedAt} /></span> : <span className="muted">active</span>),
                    },
                    {
                      key: "actions",
                      header: <span className="sr-only">Actions</span>,
                      cell: (r) => {
                        const why = !operator ? `the dashboard's token for ${service} is read-only (viewer)` : !q.data.pauseSupported ? (q.data.pauseUnsupportedReason ?? "not supported") : undefined;
                        return may.act ? <PauseButton service={service} row={r} why={why} busy={toggling} onNotice={setNotice} /> : null;
                      },
                    },
                  ]}
                />
                <TenantDepths service={service} />
              </div>
            )}
          </Card>
        );
      })}
    </div>
  );
}

const TOGGLES = new Set(["queues.pause", "queues.resume"]);
function isToggle(mutationKey: readonly unknown[] | undefined): boolean {
  const path = mutationKey?.[1];
  return Array.isArray(path) && TOGGLES.has(path.join("."));
}

/** Pauses or resumes one task of one service (queues.pause / queues.resume), then refetches that service's queues. */
function PauseButton({ service, row, why, busy, onNotice }: { service: string; row: TaskQueueView; why: string | undefined; busy: boolean; onNotice: (notice: { tone: "bad" | "info"; text: string }) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(service);
  const pause = !row.paused;
  const callbacks = {
    onSuccess: (result: { task: string; paused: boolean }) => onNotice({ tone: "info", text: `${result.paused ? "Paused" : "Resumed"} ${result.task} on ${service}.` }),
    onError: (error: { message: string }) => onNotice({ tone: "bad", text: `Could not ${pause ? "pause" : "resume"} ${row.task} on ${service}: ${error.message}` }),
    onSettled: () => queryClient.invalidateQueries(trpc.queues.list.pathFilter()),
  };
  const pauseTask = useMutation(trpc.queues.pause.mutationOptions(callbacks));
  const resumeTask = useMutation(trpc.queues.resume.mutationOptions(callbacks));
  return (
    <Button
      small
      variant={row.paused ? "primary" : "default"}
      disabled={why !== undefined || busy}
      title={why}
      aria-label={`${row.paused ? "Resume" : "Pause"} ${row.task}`}
      onClick={() => (pause ? pauseTask : resumeTask).mutate({ task: row.task })}
    >
      {row.paused ? "Resume" : "Pause"}
    </Button>
  );
}
