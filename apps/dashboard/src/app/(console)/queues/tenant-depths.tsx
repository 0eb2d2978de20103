"use client";
import { useQuery } from "@tanstack/react-query";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import type { AdminOutputs } from "~/trpc/types";
import { useServiceTRPC } from "~/trpc/provider";

type TenantRow = AdminOutputs["queues"]["tenants"]["tenants"][number];

/** One service's queue by tenant (queues.tenants): what each tenant has waiting and running, and how long it waits. */
export function TenantDepths({ service }: { service: string }) {
  const trpc = useServiceTRPC(service);
  const q = useQuery(trpc.queues.tenants.queryOptions(undefined, { refetchInterval: 5000 }));
  if (q.isPending) return <Loading what="depths by tenant" />;
  if (q.isError) return <QueryError service={service} procedure="queues.tenants" error={q.error} what="depths by tenant" />;
  if (!q.data.enabled) return null;
  if (!q.data.supported) return <p className="alert alert-info" role="status">No depths by tenant: {q.data.reason}</p>;
  return (
    <div className="stack">
      <h3>By tenant</h3>
      {!q.data.exact ? (
        <p className="muted">Counted in the oldest {q.data.window} jobs of each state: the tenants a claim reaches next.</p>
      ) : null}
      <Table<TenantRow>
        label={`Depths by tenant of ${service}`}
        rows={q.data.tenants}
        rowKey={(r) => r.tenantId ?? "(none)"}
        empty={<EmptyState title="Nothing waiting">{service} has no job waiting or running.</EmptyState>}
        columns={[
          { key: "tenant", header: "Tenant", cell: (r) => (r.tenantId === null ? <span className="muted">no tenant</span> : <code>{r.tenantId}</code>) },
          { key: "ready", header: "Ready", numeric: true, cell: (r) => r.ready },
          { key: "scheduled", header: "Scheduled", numeric: true, cell: (r) => r.scheduled },
          { key: "running", header: "Running", numeric: true, cell: (r) => r.running },
          { key: "wait", header: "Oldest wait", numeric: true, cell: (r) => (r.oldestReadyAt === null ? <span className="muted">—</span> : formatWait(r.waitMs)) },
        ]}
      />
    </div>
  );
}

function formatWait(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
}
