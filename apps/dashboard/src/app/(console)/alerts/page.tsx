"use client";
import { useQueries } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Button } from "~/components/button";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { AlertDeleteConfirm, AlertForm, type AlertChange } from "./alert-actions";
import { Badge } from "~/components/badge";
import { Card } from "~/components/card";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { REFRESH_MS } from "~/trpc/query-client";
import { useServices, useTRPC } from "~/trpc/provider";
import type { AdminOutputs } from "~/trpc/types";

type AlertsList = AdminOutputs["alerts"]["list"];
type AlertItem = AlertsList["alerts"][number];
type AlertEventItem = AdminOutputs["alerts"]["history"]["events"][number];

/** Each service's alert rules, where each stands, and every notification with its delivery (docs/alerts.md). */
export default function AlertsPage() {
  const services = useServices();
  const trpc = useTRPC();
  const lists = useQueries({ queries: services.map((s) => trpc(s).alerts.list.queryOptions(undefined, { refetchInterval: REFRESH_MS })) });
  const roles = useRoles(services);
  const may = useMayAct();
  const [change, setChange] = useState<AlertChange | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const histories = useQueries({ queries: services.map((s) => trpc(s).alerts.history.queryOptions({ limit: 50 }, { refetchInterval: REFRESH_MS })) });
  return (
    <>
      <h1>Alerts</h1>
      <p className="muted">
        A rule fires once when it starts failing and once when it recovers; each notification is posted to its webhook, retried with backoff, and listed here as delivered or failed.
      </p>
      <div className="stack">
        {notice ? (
          <p className="alert alert-info" role="status">
            {notice}
          </p>
        ) : null}
        {services.map((s, i) => {
          const list = lists[i]!;
          const history = histories[i]!;
          const firing = list.data?.alerts.filter((a) => a.state === "firing").length ?? 0;
          const readOnly = roles[s] !== "operator";
          const why = readOnly ? `the dashboard's token for ${s} is read-only (viewer)` : undefined;
          const act = may.act && list.data?.enabled === true ? { readOnly, why, onChange: setChange } : null;
          return (
            <Card key={s} title={s} label={`alerts of ${s}`} actions={list.data?.enabled ? <Badge tone={firing > 0 ? "bad" : "ok"}>{firing} firing</Badge> : null}>
              {act ? (
                <div className="row">
                  <Button variant="primary" disabled={readOnly} title={why} onClick={() => setChange({ kind: "form", service: s, alert: null })} aria-label={`New alert on ${s}`}>
                    New alert
                  </Button>
                </div>
              ) : null}
              {list.isPending ? (
                <Loading what="alerts" />
              ) : list.isError ? (
                <QueryError service={s} procedure="alerts.list" error={list.error} what="its alerts" />
              ) : (
                <ServiceAlerts service={s} data={list.data} events={history.data?.events ?? []} act={act} />
              )}
            </Card>
          );
        })}
        {services.length === 0 ? <EmptyState title="No services configured" /> : null}
      </div>
      {change?.kind === "form" ? <AlertForm service={change.service} alert={change.alert} onClose={() => setChange(null)} onDone={setNotice} /> : null}
      {change?.kind === "delete" ? <AlertDeleteConfirm change={change} onClose={() => setChange(null)} onDone={setNotice} /> : null}
    </>
  );
}

function StateBadge({ state }: { state: AlertItem["state"] }) {
  if (state === "firing") return <Badge tone="bad">firing</Badge>;
  if (state === "resolved") return <Badge tone="ok">resolved</Badge>;
  return <Badge tone="neutral">ok</Badge>;
}

function scope(a: AlertItem): string {
  if (a.rule === "promise") return `${a.when} → ${a.then} within ${a.within}`;
  return a.task ? `task ${a.task}` : a.queue ? `queue ${a.queue}` : a.topic ? `topic ${a.topic}` : "whole service";
}

/** What a notification named (a promise's late request and hop, a kafka_lag rule's worst partition), the request linked to its Timeline. */
function Detail({ event }: { event: AlertEventItem | undefined }) {
  if (!event?.detail) return <span className="muted">—</span>;
  const example = event.example;
  if (!example) return <span>{event.detail}</span>;
  const prefix = `request ${example.requestId}`;
  const rest = event.detail.startsWith(prefix) ? event.detail.slice(prefix.length) : `: ${event.detail}`;
  return (
    <span title={`late at ${example.hop} in ${example.service}`}>
      request{" "}
      <Link href={`/timeline?id=${encodeURIComponent(example.requestId)}`} data-timeline-link aria-label={`Timeline of request ${example.requestId}`}>
        {example.requestId}
      </Link>
      {rest}
    </span>
  );
}

interface Act {
  readOnly: boolean;
  why: string | undefined;
  onChange: (change: AlertChange) => void;
}

function ServiceAlerts({ service, data, events, act }: { service: string; data: AlertsList; events: AlertEventItem[]; act: Act | null }) {
  if (!data.enabled) return <EmptyState title="No alerts">{data.reason}</EmptyState>;
  // A firing rule shows what its notification named: the newest entry of its history (events are newest first).
  const firedWith = (a: AlertItem) => (a.state === "firing" ? events.find((e) => e.alert === a.name && e.state === "firing") : undefined);
  return (
    <div className="stack">
      <Table<AlertItem>
        label={`Alert rules of ${service}`}
        rows={data.alerts}
        rowKey={(a) => a.name}
        empty={
          <EmptyState title="No alert rule">
            Add <code>[[alerts]]</code> to jfast.toml, or create one with the admin API&apos;s <code>alerts.create</code>.
          </EmptyState>
        }
        columns={[
          { key: "name", header: "Alert", cell: (a) => <strong>{a.name}</strong> },
          { key: "state", header: "State", cell: (a) => <StateBadge state={a.state} /> },
          { key: "rule", header: "Rule", cell: (a) => <code>{a.rule}</code> },
          { key: "scope", header: "Scope", cell: (a) => scope(a) },
          { key: "threshold", header: "Threshold", numeric: true, cell: (a) => String(a.threshold) },
          { key: "window", header: "Window", cell: (a) => a.window },
          { key: "value", header: "Value", numeric: true, cell: (a) => (a.value === null ? <span className="muted">—</span> : String(a.value)) },
          { key: "detail", header: "Detail", cell: (a) => <Detail event={firedWith(a)} /> },
          { key: "since", header: "Since", cell: (a) => (a.changedAt ? <RelativeTime iso={a.changedAt} /> : <span className="muted">—</span>) },
          { key: "webhook", header: "Webhook", cell: (a) => <code>{a.webhook}</code> },
          { key: "source", header: "Source", cell: (a) => (a.source === "config" ? "jfast.toml" : `run time${a.updatedBy ? ` (${a.updatedBy})` : ""}`) },
          ...(act
            ? [
                {
                  key: "actions",
                  header: "Actions",
                  cell: (a: AlertItem) =>
                    a.source === "runtime" ? (
                      <div className="row" style={{ flexWrap: "nowrap" }}>
                        <Button small disabled={act.readOnly} title={act.why} aria-label={`Edit ${a.name}`} onClick={() => act.onChange({ kind: "form", service, alert: a })}>
                          Edit
                        </Button>
                        <Button small variant="danger" disabled={act.readOnly} title={act.why} aria-label={`Delete ${a.name}`} onClick={() => act.onChange({ kind: "delete", service, alert: a })}>
                          Delete
                        </Button>
                      </div>
                    ) : (
                      <span className="muted nowrap" title="written in jfast.toml: change it there and deploy">
                        in jfast.toml
                      </span>
                    ),
                },
              ]
            : []),
        ]}
      />
      <h3>History</h3>
      <Table<AlertEventItem>
        label={`Alert history of ${service}`}
        rows={events}
        rowKey={(e) => e.id}
        empty={<EmptyState title="Nothing yet">No rule of {service} has fired.</EmptyState>}
        columns={[
          { key: "at", header: "At", cell: (e) => <RelativeTime iso={e.at} /> },
          { key: "alert", header: "Alert", cell: (e) => e.alert },
          { key: "state", header: "State", cell: (e) => <StateBadge state={e.state} /> },
          { key: "value", header: "Value", numeric: true, cell: (e) => (e.value === null ? "—" : String(e.value)) },
          { key: "detail", header: "Detail", cell: (e) => <Detail event={e} /> },
          {
            key: "delivery",
            header: "Delivery",
            cell: (e) =>
              e.delivery === "delivered" ? (
                <Badge tone="ok">delivered</Badge>
              ) : e.delivery === "failed" ? (
                <Badge tone="bad" title={e.lastError ?? undefined}>
                  failed
                </Badge>
              ) : (
                <Badge tone="neutral">pending</Badge>
              ),
          },
          { key: "attempts", header: "Attempts", numeric: true, cell: (e) => String(e.attempts) },
          { key: "error", header: "Last error", cell: (e) => (e.lastError ? <span className="muted">{e.lastError}</span> : "") },
        ]}
      />
    </div>
  );
}
