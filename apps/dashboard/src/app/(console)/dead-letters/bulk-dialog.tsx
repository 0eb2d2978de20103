"use client";
import type { DeadFilter } from "@jfast/runtime/admin";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { useTRPC } from "~/trpc/provider";

/** The service's default replay rate (deadLetters.retryMatching). */
const DEFAULT_RATE = 100;

export interface BulkAction {
  kind: "retry" | "discard";
  services: string[];
  filter: DeadFilter;
}

/** Shows how many dead letters a bulk action touches on each service before anything happens. */
export function BulkDialog({ action, roles, onClose, onDone }: { action: BulkAction; roles: Record<string, string | null>; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useTRPC();
  const previews = useQueries({
    queries: action.services.map((s) => trpc(s).deadLetters.preview.queryOptions({ filter: action.filter }, { refetchInterval: false })),
  });
  const allowed = action.services.filter((s) => roles[s] === "operator");
  const count = action.services.reduce((sum, s, i) => sum + (allowed.includes(s) ? (previews[i]?.data?.count ?? 0) : 0), 0);
  const [rate, setRate] = useState(String(DEFAULT_RATE));
  const rateValue = Number(rate);
  const rateValid = Number.isInteger(rateValue) && rateValue >= 1 && rateValue <= 10_000;
  const run = useMutation({
    // One action over several services: each service's own router mutation, all at once.
    mutationFn: async (_: void, context) => {
      const done = await Promise.all(
        allowed.map(async (s) => {
          const deadLetters = trpc(s).deadLetters;
          if (action.kind === "discard") return { count: (await deadLetters.discardMatching.mutationOptions().mutationFn!({ filter: action.filter }, context)).discarded, replay: false };
          const started = await deadLetters.retryMatching.mutationOptions().mutationFn!({ filter: action.filter, ratePerSecond: rateValue }, context);
          return { count: started.total, replay: true };
        }),
      );
      return { count: done.reduce((a, b) => a + b.count, 0), replay: done.some((d) => d.replay) };
    },
    onSuccess: ({ count, replay }) => {
      const plural = count === 1 ? "" : "s";
      onDone(replay ? `Replay started: ${count} dead letter${plural} at up to ${rateValue} per second. Progress is under Replays.` : `Discarded ${count} dead letter${plural}.`);
      onClose();
    },
    onSettled: () => Promise.all(action.services.map((s) => queryClient.invalidateQueries(trpc(s).pathFilter()))),
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
        {action.kind === "retry" ? (
          <label className="field" style={{ maxWidth: 260 }}>
            Replay rate (jobs per second)
            <input className="input" type="number" min={1} max={10000} step={1} value={rate} onChange={(e) => setRate(e.target.value)} aria-invalid={!rateValid} />
            <span>{rateValid ? "The service requeues them at this pace, so the workers are not flooded." : "A whole number from 1 to 10000."}</span>
          </label>
        ) : null}
        {run.isError ? <p className="alert alert-bad" role="alert">{run.error.message}</p> : null}
        <div className="row">
          <Button variant={action.kind === "retry" ? "primary" : "danger"} disabled={count === 0 || run.isPending || previews.some((p) => p.isPending) || (action.kind === "retry" && !rateValid)} onClick={() => run.mutate()}>
            {verb} {count} dead letter{count === 1 ? "" : "s"}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </div>
    </Drawer>
  );
}
