"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useServiceTRPC } from "~/trpc/provider";

/**
 * Rows of one service's outbox that the relay set aside as dead (a destination this configuration can never
 * reach, or every delivery attempt failed), with their last error. An operator sends them back to the relay or
 * deletes them, as with dead letters; the service audits each action.
 */
export function DeadOutboxRows({ service, readOnly, hidden }: { service: string; readOnly: boolean; hidden: boolean }) {
  const trpc = useServiceTRPC(service);
  const queryClient = useQueryClient();
  const [notice, setNotice] = useState<string | null>(null);
  const dead = useQuery(trpc.outbox.dead.queryOptions({ limit: 50 }));
  const settle = (verb: string) => ({
    onSuccess: (result: { missing: string[] }, input: { ids: string[] }) => {
      const done = input.ids.length - result.missing.length;
      setNotice(`${verb} ${done} row${done === 1 ? "" : "s"} on ${service}.`);
    },
    onError: (error: { message: string }) => setNotice(`Could not change the outbox of ${service}: ${error.message}`),
    // The status card, this list and the audit trail all move.
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const retry = useMutation(trpc.outbox.retry.mutationOptions(settle("Sent back to the relay:")));
  const discard = useMutation(trpc.outbox.discard.mutationOptions(settle("Discarded")));
  if (dead.isPending) return <Loading what="dead outbox rows" />;
  if (dead.isError) return <ErrorState title="Could not list dead rows:" error={dead.error} />;
  const busy = retry.isPending || discard.isPending;
  const why = readOnly ? `the dashboard's token for ${service} is read-only (viewer)` : undefined;
  return (
    <div className="stack">
      {notice ? <p role="status">{notice}</p> : null}
      <Table
        label={`Dead outbox rows of ${service}`}
        rows={dead.data.rows}
        rowKey={(r) => r.id}
        empty={<EmptyState title="No dead rows">Every row of this outbox was delivered or is on its way.</EmptyState>}
        columns={[
          { key: "destination", header: "Destination", cell: (r) => (<><Badge tone="neutral">{r.kind === "job" ? "queue" : "topic"}</Badge> <code>{r.destination}</code></>) },
          { key: "error", header: "Last error", cell: (r) => (r.lastError ? <span className="error-text">{r.lastError.class}: {firstLine(r.lastError.message)}</span> : <span className="muted">none recorded</span>) },
          { key: "attempts", header: "Attempts", numeric: true, cell: (r) => r.attempts },
          { key: "died", header: "Died", cell: (r) => <RelativeTime iso={r.diedAt} /> },
          {
            key: "actions",
            header: <span className="sr-only">Actions</span>,
            cell: (r) => (
              <div className="row" style={{ flexWrap: "nowrap" }}>
                {hidden ? null : <Button small variant="primary" disabled={readOnly || busy} title={why} aria-label={`Retry outbox row ${r.id}`} onClick={() => retry.mutate({ ids: [r.id] })}>Retry</Button>}
                {hidden ? null : <Button small variant="danger" disabled={readOnly || busy} title={why} aria-label={`Discard outbox row ${r.id}`} onClick={() => discard.mutate({ ids: [r.id] })}>Discard</Button>}
              </div>
            ),
          },
        ]}
      />
    </div>
  );
}

/** An error's first line, short enough for a table cell (the fix and docs lines follow it in the message). */
function firstLine(message: string): string {
  const line = message.split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}
