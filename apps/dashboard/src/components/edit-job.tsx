"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "./button";
import { useServiceTRPC } from "~/trpc/provider";

const EDITOR = { height: "auto", padding: 8, fontFamily: "var(--mono, ui-monospace, monospace)", width: "100%" } as const;

/**
 * Edit a waiting or scheduled job in place (jobs.update): its payload in the JSON editor of edit-and-retry, its
 * priority and when it runs. Only what changed is sent; the payload is checked against the task's schema, and a job
 * a worker claimed meanwhile is refused with nothing changed. The service's audit entry keeps the before and after.
 */
export function EditJob({
  service,
  job,
  payloadReadable,
  onDone,
}: {
  service: string;
  job: { id: string; payload?: unknown; priority: number; availableAt: string };
  /** False when the drawer shows the payload encrypted: it can then be replaced, not edited. */
  payloadReadable: boolean;
  onDone: (text: string) => void;
}) {
  const trpc = useServiceTRPC(service);
  const queryClient = useQueryClient();
  const original = payloadReadable ? JSON.stringify(job.payload ?? {}, null, 2) : "";
  const [text, setText] = useState(original);
  const [priority, setPriority] = useState(String(job.priority));
  const [runAt, setRunAt] = useState(job.availableAt);
  const [problem, setProblem] = useState<string | null>(null);
  const update = useMutation({
    ...trpc.jobs.update.mutationOptions(),
    onSuccess: (result) =>
      onDone(`Updated ${result.id} on ${service}: ${result.state}, priority ${result.priority}${result.payloadChanges ? `, ${result.payloadChanges} payload change${result.payloadChanges === 1 ? "" : "s"}` : ""}.`),
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const submit = () => {
    const input: { id: string; payload?: unknown; priority?: number; runAt?: string } = { id: job.id };
    if (text.trim() !== original.trim() && text.trim() !== "") {
      try {
        input.payload = JSON.parse(text);
      } catch (error) {
        setProblem(`The payload is not JSON: ${(error as Error).message}`);
        return;
      }
    }
    if (priority !== String(job.priority)) {
      if (!/^\d$/.test(priority)) {
        setProblem("The priority is a whole number from 0 (runs first) to 9 (last).");
        return;
      }
      input.priority = Number(priority);
    }
    if (runAt !== job.availableAt) {
      if (Number.isNaN(Date.parse(runAt)) || !/^\d{4}-\d\d-\d\dT.*(Z|[+-]\d\d:\d\d)$/.test(runAt)) {
        setProblem("Run at is an ISO time with its offset, e.g. 2026-12-24T08:00:00Z.");
        return;
      }
      input.runAt = runAt;
    }
    if (Object.keys(input).length === 1) {
      setProblem("Nothing changed.");
      return;
    }
    setProblem(null);
    update.mutate(input);
  };
  const error = problem ?? update.error?.message ?? null;
  return (
    <form
      className="stack"
      aria-label="Edit job"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label className="field">
        {payloadReadable ? "Payload (JSON)" : "New payload (JSON; the stored one is encrypted: leave empty to keep it)"}
        <textarea className="input" style={EDITOR} rows={8} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </label>
      <div className="row">
        <label className="field">
          Priority (0 runs first, 9 last)
          <input className="input" type="number" min={0} max={9} step={1} value={priority} onChange={(e) => setPriority(e.target.value)} />
        </label>
        <label className="field">
          Run at (ISO time)
          <input className="input" value={runAt} onChange={(e) => setRunAt(e.target.value)} spellCheck={false} />
        </label>
        <Button type="button" onClick={() => setRunAt(new Date().toISOString())}>Now</Button>
      </div>
      <p className="muted">Only a job that has not started can be edited; the payload is checked against the task&apos;s schema, and the audit trail keeps what changed under your name.</p>
      {error ? <p className="alert alert-bad" role="alert">{error}</p> : null}
      <div className="row">
        <Button type="submit" variant="primary" disabled={update.isPending}>Save changes</Button>
      </div>
    </form>
  );
}
