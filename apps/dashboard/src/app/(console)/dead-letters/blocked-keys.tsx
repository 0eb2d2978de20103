"use client";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { RelativeTime } from "~/components/time";
import { Table } from "~/components/table";
import type { AdminOutputs } from "~/trpc/types";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { useServiceTRPC, useServices, useTRPC } from "~/trpc/provider";

type BlockedKeyRow = AdminOutputs["keys"]["blocked"]["keys"][number];

/**
 * Keys of tasks with orderedBy that a dead job blocks (keys.blocked), per service, each with a Skip button
 * (keys.skip, audited): the dead job stays a dead letter and the key's next job starts. Shown only when a key is
 * blocked. A viewer gets no button; a service the dashboard holds with a viewer token shows it disabled, saying
 * why. docs/flow-control.md#order-per-key
 */
export function BlockedKeys() {
  const services = useServices();
  const trpc = useTRPC();
  const roles = useRoles(services);
  const may = useMayAct();
  const queries = useQueries({ queries: services.map((s) => trpc(s).keys.blocked.queryOptions(undefined, { refetchInterval: 10_000 })) });
  const [notice, setNotice] = useState<{ tone: "bad" | "info"; text: string } | null>(null);
  const rows = services.flatMap((service, i) => (queries[i]?.data?.keys ?? []).map((key) => ({ service, key })));
  if (rows.length === 0 && notice === null) return null;
  return (
    <section className="stack" aria-labelledby="blocked-keys-title">
      <h2 id="blocked-keys-title">Blocked keys</h2>
      <p className="muted">
        A dead job of a task with <code>orderedBy</code> holds the jobs after it with its key. Retry the dead job to run it
        first, or skip the key: the dead job stays here and the key&apos;s next job starts.
      </p>
      {notice ? (
        <p className={notice.tone === "bad" ? "alert alert-error" : "alert alert-info"} role={notice.tone === "bad" ? "alert" : "status"}>
          {notice.text}
        </p>
      ) : null}
      {rows.length > 0 ? (
        <Table<{ service: string; key: BlockedKeyRow }>
          label="Blocked keys"
          rows={rows}
          rowKey={(r) => `${r.service}\u0000${r.key.task}\u0000${r.key.key}`}
          columns={[
            ...(services.length > 1 ? [{ key: "service", header: "Service", cell: (r: { service: string }) => r.service }] : []),
            { key: "task", header: "Task", cell: (r) => <code>{r.key.task}</code> },
            { key: "key", header: "Key", cell: (r) => <code>{r.key.key}</code> },
            { key: "job", header: "Dead job", cell: (r) => <code>{r.key.jobId}</code> },
            { key: "died", header: "Died", cell: (r) => <RelativeTime iso={r.key.diedAt} /> },
            { key: "waiting", header: "Waiting", numeric: true, cell: (r) => r.key.waiting },
            ...(may.act
              ? [
                  {
                    key: "skip",
                    header: <span className="sr-only">Actions</span>,
                    cell: (r: { service: string; key: BlockedKeyRow }) => <SkipButton service={r.service} row={r.key} readOnly={roles[r.service] !== "operator"} onNotice={setNotice} />,
                  },
                ]
              : []),
          ]}
        />
      ) : null}
    </section>
  );
}

function SkipButton({ service, row, readOnly, onNotice }: { service: string; row: BlockedKeyRow; readOnly: boolean; onNotice: (n: { tone: "bad" | "info"; text: string }) => void }) {
  const trpc = useServiceTRPC(service);
  const queryClient = useQueryClient();
  const skip = useMutation(
    trpc.keys.skip.mutationOptions({
      onSuccess: (r) => onNotice({ tone: "info", text: `Skipped key ${r.key} of ${r.task} on ${service}: its next job starts.` }),
      onError: (error) => onNotice({ tone: "bad", text: `Could not skip key ${row.key} of ${row.task} on ${service}: ${error.message}` }),
      onSettled: () => queryClient.invalidateQueries(trpc.keys.blocked.pathFilter()),
    }),
  );
  const why = readOnly ? `the dashboard's token for ${service} is read-only (viewer)` : undefined;
  return (
    <Button small disabled={why !== undefined || skip.isPending} title={why} aria-label={`Skip key ${row.key} of ${row.task}`} onClick={() => skip.mutate({ task: row.task, key: row.key })}>
      Skip
    </Button>
  );
}
