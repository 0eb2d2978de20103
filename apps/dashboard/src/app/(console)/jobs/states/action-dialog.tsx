"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { useServiceTRPC } from "~/trpc/provider";
import type { JobActionName } from "~/trpc/types";

export type PendingAction =
  | { kind: "one"; action: JobActionName; service: string; id: string; task: string }
  | { kind: "bulk"; action: JobActionName; service: string; state: "ready" | "scheduled" | "running"; filter: { task?: string; tenantId?: string } };

const VERB: Record<JobActionName, { label: string; done: string; explain: string }> = {
  cancel: { label: "Cancel", done: "Cancelled", explain: "A waiting job never runs; a running one is told to stop at its worker's next heartbeat. Never retried." },
  runNow: { label: "Run now", done: "Made due now", explain: "The job is claimed by the next free worker instead of at its time; its attempts are unchanged." },
  delete: { label: "Delete", done: "Deleted", explain: "The job is removed for good and never runs." },
};

/** Confirms one action, or a bulk one after previewing how many jobs it acts on; the service audits each. */
export function ActionDialog({ action, onClose, onDone }: { action: PendingAction; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(action.service);
  const verb = VERB[action.action];
  const preview = useQuery({
    ...trpc.jobs.bulkPreview.queryOptions(
      action.kind === "bulk" ? { action: action.action, state: action.state, ...action.filter } : { action: action.action, state: "ready" },
      { refetchInterval: false },
    ),
    enabled: action.kind === "bulk",
  });
  const one = useMutation({
    mutationFn: async (_: void, context) => {
      if (action.kind !== "one") throw new Error("not a single action");
      const options = action.action === "cancel" ? trpc.jobs.cancel.mutationOptions() : action.action === "runNow" ? trpc.jobs.runNow.mutationOptions() : trpc.jobs.delete.mutationOptions();
      const result = (await options.mutationFn!({ id: action.id }, context)) as { state: string | null; done?: boolean; cancelled?: boolean };
      return result.done ?? result.cancelled ?? false;
    },
    onSuccess: (done) => {
      if (action.kind === "one") onDone(done ? `${verb.done} ${action.id} on ${action.service}.` : `${action.id} was not changed: it is no longer in that state.`);
      onClose();
    },
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const bulk = useMutation({
    ...trpc.jobs.bulk.mutationOptions(),
    onSuccess: (r) => {
      onDone(`${verb.done} ${r.done} job${r.done === 1 ? "" : "s"} on ${action.service}${r.skipped ? ` (${r.skipped} had moved on)` : ""}${r.capped ? "; more match: run it again" : ""}.`);
      onClose();
    },
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const error = one.error ?? bulk.error;
  const busy = one.isPending || bulk.isPending;
  const title = action.kind === "one" ? `${verb.label} job ${action.id}` : `${verb.label} ${action.state} jobs`;
  return (
    <Drawer title={title} onClose={onClose}>
      <div className="stack">
        <p>{verb.explain}</p>
        {action.kind === "one" ? (
          <p>
            <code>{action.task}</code> · <code>{action.id}</code> on <strong>{action.service}</strong>
          </p>
        ) : (
          <p data-preview={action.service}>
            {preview.isPending ? "Counting…" : preview.isError ? <span className="error-text">{preview.error.message}</span> : `${preview.data?.count ?? 0}${preview.data?.capped ? " (the most one call acts on)" : ""} ${action.state} job${preview.data?.count === 1 ? "" : "s"} on ${action.service} match`}
            {Object.keys(action.filter).length ? <> the filter <code>{JSON.stringify(action.filter)}</code></> : null}.
          </p>
        )}
        <p className="muted">The service records this in its audit trail under your name.</p>
        {error ? <p className="alert alert-bad" role="alert">{error.message}</p> : null}
        <div className="row">
          <Button
            variant={action.action === "runNow" ? "primary" : "danger"}
            disabled={busy || (action.kind === "bulk" && !preview.data?.count)}
            onClick={() => (action.kind === "one" ? one.mutate() : bulk.mutate({ action: action.action, state: action.state, ...action.filter }))}
          >
            {action.kind === "one" ? `${verb.label} this job` : `${verb.label} ${preview.data?.count ?? 0} job${preview.data?.count === 1 ? "" : "s"}`}
          </Button>
          <Button onClick={onClose}>Keep {action.kind === "one" ? "it" : "them"}</Button>
        </div>
      </div>
    </Drawer>
  );
}
