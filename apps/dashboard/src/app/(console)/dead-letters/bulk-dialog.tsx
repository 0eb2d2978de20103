"use client";
import type { DeadFilter } from "@jfast/runtime/admin";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { adminClient } from "~/trpc/client";

export interface BulkAction {
  kind: "retry" | "discard";
  services: string[];
  filter: DeadFilter;
}

/** Shows how many dead letters a bulk action touches on each service before anything happens. */
export function BulkDialog({ action, roles, onClose, onDone }: { action: BulkAction; roles: Record<string, string | null>; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const previews = useQueries({
    queries: action.services.map((s) => ({
      queryKey: [s, "deadLetters.preview", action.filter],
      queryFn: () => adminClient(s).deadLetters.preview.query({ filter: action.filter }),
      refetchInterval: false as const,
    })),
  });
  const allowed = action.services.filter((s) => roles[s] === "operator");
  const count = action.services.reduce((sum, s, i) => sum + (allowed.includes(s) ? (previews[i]?.data?.count ?? 0) : 0), 0);
  const run = useMutation({
    mutationFn: async () => {
      const done = await Promise.all(
        allowed.map(async (s) => {
          const client = adminClient(s).deadLetters;
          const result = action.kind === "retry" ? (await client.retryMatching.mutate({ filter: action.filter })).retried : (await client.discardMatching.mutate({ filter: action.filter })).discarded;
          return result;
        }),
      );
      return done.reduce((a, b) => a + b, 0);
    },
    onSuccess: (n) => {
      onDone(`${action.kind === "retry" ? "Requeued" : "Discarded"} ${n} dead letter${n === 1 ? "" : "s"}.`);
      onClose();
    },
    onSettled: () => Promise.all(action.services.map((s) => queryClient.invalidateQueries({ queryKey: [s] }))),
  });
  const verb = action.kind === "retry" ? "Retry" : "Discard";
  return (
    <Drawer title={`${verb} dead letters`} onClose={onClose}>
      <div className="stack">
        <ul>
          {action.services.map((s, i) => (
            <li key={s}>
              <strong>{s}</strong>:{" "}
              {roles[s] !== "operator" ? (
                <span className="muted">skipped — the dashboard's token for {s} is read-only</span>
              ) : previews[i]?.isPending ? (
                "counting…"
              ) : previews[i]?.isError ? (
                <span className="error-text">{previews[i]?.error?.message}</span>
              ) : (
                <span data-preview={s}>
                  {previews[i]?.data?.count} dead letter{previews[i]?.data?.count === 1 ? "" : "s"}
                  {previews[i]?.data?.exact ? "" : " or more"}
                </span>
              )}
            </li>
          ))}
        </ul>
        {Object.keys(action.filter).length ? <p className="muted">Filter: <code>{JSON.stringify(action.filter)}</code></p> : null}
        {run.isError ? <p className="alert alert-bad" role="alert">{run.error.message}</p> : null}
        <div className="row">
          <Button variant={action.kind === "retry" ? "primary" : "danger"} disabled={count === 0 || run.isPending || previews.some((p) => p.isPending)} onClick={() => run.mutate()}>
            {verb} {count} dead letter{count === 1 ? "" : "s"}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </div>
    </Drawer>
  );
}
