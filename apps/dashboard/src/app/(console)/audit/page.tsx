"use client";
import type { AuditEntry } from "@jfast/runtime/admin";
import { useQueries } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { Table } from "~/components/table";
import { TenantFilter } from "~/components/tenant-filter";
import { RelativeTime } from "~/components/time";
import { useServices, useTRPC } from "~/trpc/provider";

interface Row {
  service: string;
  entry: AuditEntry;
}

export default function AuditPage() {
  const services = useServices();
  const [tenant, setTenant] = useState("");
  const trpc = useTRPC();
  const queries = useQueries({
    queries: services.map((s) => trpc(s).audit.list.queryOptions({ limit: 100, ...(tenant ? { tenant } : {}) })),
  });
  const rows: Row[] = services.flatMap((s, i) => (queries[i]?.data?.entries ?? []).map((entry) => ({ service: s, entry }))).sort((a, b) => b.entry.at.localeCompare(a.entry.at));
  const memory = services.filter((_, i) => queries[i]?.data?.store === "memory");
  return (
    <>
      <h1>Audit trail</h1>
      <div className="stack">
        <TenantFilter tenant={tenant} onChange={setTenant} />
        {memory.length ? <p className="alert alert-info" role="status">{memory.join(", ")} keep{memory.length === 1 ? "s" : ""} the trail in memory and in its logs (no database): it restarts empty.</p> : null}
        {services.map((s, i) => (queries[i]?.isError ? <ErrorState key={s} title={`${s}:`} error={queries[i]?.error} /> : null))}
        {queries.some((q) => q.isPending) ? <Loading what="the audit trail" /> : (
          <Table<Row>
            label="Audit trail"
            rows={rows}
            rowKey={(r) => `${r.service}/${r.entry.id}`}
            empty={<EmptyState title={tenant ? "No admin actions for this tenant" : "No admin actions yet"}>{tenant ? `No retry, discard, replay or pause named tenant ${tenant}.` : "Retries, discards, replays and pauses appear here with who made them."}</EmptyState>}
            columns={[
              { key: "at", header: "When", cell: (r) => <RelativeTime iso={r.entry.at} /> },
              { key: "service", header: "Service", cell: (r) => <Badge tone="info">{r.service}</Badge> },
              { key: "who", header: "Who", cell: (r) => <>{r.entry.actor} <Badge>{r.entry.role}</Badge></> },
              { key: "action", header: "Action", cell: (r) => <code>{r.entry.action}</code> },
              { key: "count", header: "Jobs", numeric: true, cell: (r) => r.entry.count },
              { key: "ids", header: "Ids", cell: (r) => <code title={r.entry.ids.join("\n")}>{r.entry.ids.slice(0, 3).join(", ")}{r.entry.ids.length > 3 ? ` +${r.entry.ids.length - 3}` : ""}</code> },
              { key: "outcome", header: "Outcome", cell: (r) => <code>{JSON.stringify(r.entry.outcome)}</code> },
            ]}
          />
        )}
      </div>
    </>
  );
}
