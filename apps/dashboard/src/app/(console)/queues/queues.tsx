"use client";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { Card } from "~/components/card";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { TenantFilter } from "~/components/tenant-filter";
import { RelativeTime } from "~/components/time";
import { adminClient } from "~/trpc/client";
import type { TaskQueueView } from "~/trpc/types";
import { useRoles } from "~/trpc/hooks";
import { useServices } from "~/trpc/provider";

/** Depths per task on every service, and pausing a task (its jobs stay queued, no worker claims them). */
export function Queues({ initialTenant }: { initialTenant: string }) {
  const services = useServices();
  const roles = useRoles(services);
  const [tenant, setTenant] = useState(initialTenant);
  const [notice, setNotice] = useState<{ tone: "bad" | "info"; text: string } | null>(null);
  const queries = useQueries({
    queries: services.map((s) => ({ queryKey: [s, "queues.list", tenant], queryFn: () => adminClient(s).queues.list.query(tenant ? { tenant } : undefined) })),
  });
  const queryClient = useQueryClient();
  const toggle = useMutation({
    mutationFn: async ({ service, task, pause }: { service: string; task: string; pause: boolean }): Promise<{ task: string; paused: boolean }> =>
      pause ? adminClient(service).queues.pause.mutate({ task }) : adminClient(service).queues.resume.mutate({ task }),
    onSuccess: (result, { service }) => setNotice({ tone: "info", text: `${result.paused ? "Paused" : "Resumed"} ${result.task} on ${service}.` }),
    onError: (error, { service, task, pause }) => setNotice({ tone: "bad", text: `Could not ${pause ? "pause" : "resume"} ${task} on ${service}: ${error.message}` }),
    onSettled: (_r, _e, { service }) => queryClient.invalidateQueries({ queryKey: [service, "queues.list"] }),
  });

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
                        return (
                          <Button
                            small
                            variant={r.paused ? "primary" : "default"}
                            disabled={why !== undefined || toggle.isPending}
                            title={why}
                            aria-label={`${r.paused ? "Resume" : "Pause"} ${r.task}`}
                            onClick={() => toggle.mutate({ service, task: r.task, pause: !r.paused })}
                          >
                            {r.paused ? "Resume" : "Pause"}
                          </Button>
                        );
                      },
                    },
                  ]}
                />
              </div>
            )}
          </Card>
        );
      })}
    </div>
  );
}
