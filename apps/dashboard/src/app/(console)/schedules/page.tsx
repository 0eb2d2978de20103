"use client";
import { useQueries } from "@tanstack/react-query";
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
        {services.map((s, i) => {
          const q = queries[i]!;
          return (
            <Card key={s} title={s} label={`schedules of ${s}`}>
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
                    ]}
                  />
                </>
              )}
            </Card>
          );
        })}
        {services.length === 0 ? <EmptyState title="No services configured" /> : null}
      </div>
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
