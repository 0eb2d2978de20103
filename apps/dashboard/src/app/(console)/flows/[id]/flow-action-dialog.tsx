"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { useServiceTRPC } from "~/trpc/provider";

export type FlowAction = { kind: "retry"; service: string; flowId: string; step: string; jobId: string } | { kind: "cancel"; service: string; flowId: string; name: string; unfinished: number };

/** Confirms a flow repair; the service audits it under the signed-in person's name (flows.retryStep, flows.cancel). */
export function FlowActionDialog({ action, onClose, onDone }: { action: FlowAction; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(action.service);
  const settle = { onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()) };
  const retry = useMutation({
    ...trpc.flows.retryStep.mutationOptions(),
    ...settle,
    onSuccess: (r) => {
      onDone(`Retried step ${r.step} of flow ${r.id}: the flow goes on once it completes.`);
      onClose();
    },
  });
  const cancel = useMutation({
    ...trpc.flows.cancel.mutationOptions(),
    ...settle,
    onSuccess: (r) => {
      onDone(`Cancelled flow ${r.id}: ${r.cancelled.length} step${r.cancelled.length === 1 ? "" : "s"} will not run.`);
      onClose();
    },
  });
  const error = retry.error ?? cancel.error;
  const busy = retry.isPending || cancel.isPending;
  return (
    <Drawer title={action.kind === "retry" ? `Retry step ${action.step}` : `Cancel flow ${action.name}`} onClose={onClose}>
      <div className="stack">
        {action.kind === "retry" ? (
          <p>
            The dead step <strong>{action.step}</strong> (job <code>{action.jobId}</code>) goes back to the queue with its attempts reset. Once it completes, the steps after
            it run.
          </p>
        ) : (
          <p>
            Every step of <strong>{action.name}</strong> that has not finished is cancelled ({action.unfinished} now): a waiting one never runs, a running one is told to stop at
            its worker&apos;s next heartbeat. Finished steps keep their results.
          </p>
        )}
        <p className="muted">The service records this in its audit trail under your name.</p>
        {error ? <p className="alert alert-bad" role="alert">{error.message}</p> : null}
        <div className="row">
          <Button
            variant={action.kind === "retry" ? "primary" : "danger"}
            disabled={busy}
            onClick={() => (action.kind === "retry" ? retry.mutate({ id: action.flowId, step: action.step }) : cancel.mutate({ id: action.flowId }))}
          >
            {action.kind === "retry" ? "Retry this step" : "Cancel this flow"}
          </Button>
          <Button onClick={onClose}>{action.kind === "retry" ? "Leave it dead" : "Keep it running"}</Button>
        </div>
      </div>
    </Drawer>
  );
}
