"use client";
import { useQueries } from "@tanstack/react-query";
import { Button } from "~/components/button";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { ScheduleConfirm, ScheduleForm, ScheduleRowActions, type ScheduleChange } from "./schedule-actions";
import { useEffect, useState } from "react";
import { Badge } from "~/components/badge";
import { Card } from "~/components/card";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useServices, useTRPC } from "~/trpc/provider";

export default function SchedulesPage() {
  const services = useServices();
  const trpc = useTRPC();
  const queries = useQueries({ queries: services.map((s) => trpc(s).schedules.list.queryOptions({ count: 3 })) });
  const tasks = useQueries({ queries: services.map((s) => trpc(s).overview.tasks.queryOptions(undefined, { staleTime: 60_000, refetchInterval: false })) });
  const roles = useRoles(services);
  const may = useMayAct();
  const [change, setChange] = useState<ScheduleChange | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // The viewer's zone is the browser's: the server renders the page (with its data) without it, and it is
  // filled in once the page runs in the browser.
  const [local, setLocal] = useState<{ zone: string; format: Intl.DateTimeFormat } | null>(null);
  useEffect(() => {
    setLocal({
      zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      format: new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" }),
    });
  }, []);
  return (
    <>
      <h1>Schedules</h1>
      <div className="stack">
        {notice ? <p className="alert alert-info" role="status">{notice}</p> : null}
        {services.map((s, i) => {
          const q = queries[i]!;
          const readOnly = roles[s] !== "operator";
          const why = readOnly ? `the dashboard's token for ${s} is read-only (viewer)` : undefined;
          return (
            <Card key={s} title={s} label={`schedules of ${s}`}>
              {may.act && q.data?.enabled ? (
                <div className="row">
                  <Button variant="primary" disabled={readOnly} title={why} onClick={() => setChange({ kind: "form", service: s, schedule: null })} aria-label={`New schedule on ${s}`}>
                    New schedule
                  </Button>
                </div>
              ) : null}
              {q.isPending ? <Loading what="schedules" /> : q.isError ? <ErrorState title="Unreachable:" error={q.error} /> : !q.data.enabled ? (
                <EmptyState title="No scheduler">This service does not run the scheduler (<code>[plugin.queue] scheduler = true</code>).</EmptyState>
              ) : !q.data.described ? (
                <EmptyState title="Scheduler running">The scheduler on this service does not describe its schedules to the admin API.</EmptyState>
              ) : (
                <>
                  {q.data.error ? <ErrorState title="The scheduler reported:" error={new Error(q.data.error)} /> : null}
                  <Table
                    label={`Schedules of ${s}`}
                    rows={q.data.schedules}
                    rowKey={(r) => r.name}
                    empty={<EmptyState title="No schedules declared" />}
                    columns={[
                      { key: "name", header: "Schedule", cell: (r) => <code className="nowrap">{r.name}</code> },
                      {
                        key: "state",
                        header: "State",
                        cell: (r) => (
                          <span className="row">
                            {r.paused ? <Badge tone="warn">paused</Badge> : <Badge tone="ok">active</Badge>}
                            <span className="muted nowrap">{r.origin === "runtime" ? `made at run time${r.updatedBy ? ` by ${r.updatedBy}` : ""}` : "in code"}</span>
                          </span>
                        ),
                      },
                      { key: "health", header: "Ticks", cell: (r) => <TickHealth late={r.late} missed={r.missedTicks} /> },
                      { key: "expr", header: "Expression", cell: (r) => <code>{r.expression}</code> },
                      { key: "zone", header: "Zone", cell: (r) => r.timezone },
                      { key: "next", header: "Next ticks (UTC)", cell: (r) => r.nextTicks.map((t) => <div key={t} className="nowrap" data-tick={t}><time dateTime={t}>{t.replace(".000Z", "Z")}</time></div>) },
                      {
                        key: "local",
                        header: local ? `In your zone (${local.zone})` : "In your zone",
                        cell: (r) => (local ? r.nextTicks.map((t) => <div key={t} className="nowrap" data-local-tick={t}>{local.format.format(new Date(t))}</div>) : <span className="muted">…</span>),
                      },
                      { key: "last", header: "Last tick", cell: (r) => <RelativeTime iso={r.lastTickAt} /> },
                      { key: "error", header: "Last error", cell: (r) => (r.lastError ? <span className="error-text">{r.lastError}</span> : <span className="muted">—</span>) },
                      ...(may.act
                        ? [{ key: "actions", header: <span className="sr-only">Actions</span>, cell: (r: (typeof q.data.schedules)[number]) => <ScheduleRowActions service={s} row={r} disabled={readOnly} why={why} onChange={setChange} /> }]
                        : []),
                    ]}
                  />
                </>
              )}
            </Card>
          );
        })}
        {services.length === 0 ? <EmptyState title="No services configured" /> : null}
      </div>
      {change?.kind === "form" ? (
        <ScheduleForm
          service={change.service}
          schedule={change.schedule}
          tasks={tasks[services.indexOf(change.service)]?.data?.tasks ?? []}
          onClose={() => setChange(null)}
          onDone={setNotice}
        />
      ) : change ? (
        <ScheduleConfirm change={change} onClose={() => setChange(null)} onDone={setNotice} />
      ) : null}
    </>
  );
}

function TickHealth({ late, missed }: { late: boolean; missed: number }) {
  if (!late && !missed) return <Badge tone="ok">on time</Badge>;
  return (
    <span className="row">
      {late ? <Badge tone="warn" title="a tick that should have fired by now was not claimed: the scheduler is behind or stopped">late</Badge> : null}
      {missed ? <Badge tone="bad" title="ticks due in the last 24 hours that were never claimed">{missed} missed in 24 h</Badge> : null}
    </span>
  );
}
