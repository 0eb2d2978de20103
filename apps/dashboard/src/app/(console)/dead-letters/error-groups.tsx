"use client";
import type { DeadFilter } from "@jfast/runtime/admin";
import type { ErrorGroupItem as ErrorGroupView } from "~/trpc/types";
import { useQueries } from "@tanstack/react-query";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useTRPC } from "~/trpc/provider";
import type { BulkAction } from "./bulk-dialog";

interface GroupRow {
  service: string;
  group: ErrorGroupView;
}

/** Dead letters that failed the same way, biggest group first, with a bulk retry per group. */
export function ErrorGroups({ services, filter, roles, bulk, onShow, onBulk }: { services: string[]; filter: DeadFilter; roles: Record<string, string | null>; bulk: boolean; onShow: (service: string, group: string) => void; onBulk: (action: BulkAction) => void }) {
  const trpc = useTRPC();
  const queries = useQueries({
    queries: services.map((s) => trpc(s).deadLetters.groups.queryOptions({ filter })),
  });
  if (queries.some((q) => q.isPending)) return <Loading what="error groups" />;
  const rows: GroupRow[] = services.flatMap((s, i) => (queries[i]?.data?.groups ?? []).map((group) => ({ service: s, group }))).sort((a, b) => b.group.count - a.group.count);
  return (
    <>
      {services.map((s, i) => (queries[i]?.isError ? <ErrorState key={s} title={`${s}:`} error={queries[i]?.error} /> : null))}
      <Table<GroupRow>
        label="Error groups"
        rows={rows}
        rowKey={(r) => `${r.service}/${r.group.key}`}
        empty={<EmptyState title="No dead letters" />}
        columns={[
          { key: "service", header: "Service", cell: (r) => <Badge tone="info">{r.service}</Badge> },
          { key: "count", header: "Count", numeric: true, cell: (r) => <strong>{r.group.count}</strong> },
          { key: "error", header: "Error", cell: (r) => (<><Badge tone="bad">{r.group.errorClass}</Badge> <span className="error-text">{r.group.message}</span></>) },
          { key: "tasks", header: "Tasks", cell: (r) => r.group.tasks.map((t) => <code key={t}>{t} </code>) },
          { key: "newest", header: "Newest", cell: (r) => <RelativeTime iso={r.group.newestDiedAt} /> },
          {
            key: "actions",
            header: <span className="sr-only">Actions</span>,
            cell: (r) => (
              <div className="row" style={{ flexWrap: "nowrap" }}>
                <Button small onClick={() => onShow(r.service, r.group.key)}>Show</Button>
                {bulk ? <Button small variant="primary" disabled={roles[r.service] !== "operator"} onClick={() => onBulk({ kind: "retry", services: [r.service], filter: { group: r.group.key } })}>Retry group…</Button> : null}
              </div>
            ),
          },
        ]}
      />
    </>
  );
}
