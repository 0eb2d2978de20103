"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { useServiceTRPC } from "~/trpc/provider";
import type { DeadLetterItem } from "~/trpc/types";

const EDITOR = { height: "auto", padding: 8, fontFamily: "var(--mono, ui-monospace, monospace)", width: "100%" } as const;

/**
 * Edit, then retry: the dead letter's payload in a JSON editor; retrying replaces the dead letter by a job with the
 * edited payload, checked against the task's schema. The service's audit entry keeps what changed.
 */
export function EditRetry({ service, item, onDone }: { service: string; item: DeadLetterItem; onDone: (text: string) => void }) {
  const trpc = useServiceTRPC(service);
  const queryClient = useQueryClient();
  const [text, setText] = useState(JSON.stringify(item.payload ?? {}, null, 2));
  const [problem, setProblem] = useState<string | null>(null);
  const retry = useMutation({
    ...trpc.deadLetters.retry.mutationOptions(),
    onSuccess: (result) => onDone(result.jobId ? `Retried ${item.id} on ${service} with the edited payload as job ${result.jobId}.` : `${item.id} is no longer a dead letter on ${service}.`),
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const submit = () => {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch (error) {
      setProblem(`The payload is not JSON: ${(error as Error).message}`);
      return;
    }
    setProblem(null);
    retry.mutate({ ids: [item.id], payload });
  };
  const error = problem ?? retry.error?.message ?? null;
  return (
    <form
      className="stack"
      aria-label="Edit and retry"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label className="field">
        Payload to retry with (JSON)
        <textarea className="input" style={EDITOR} rows={8} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </label>
      <p className="muted">Checked against the task&apos;s schema when it has one; the dead letter is replaced by a new job, and the audit trail keeps what changed under your name.</p>
      {error ? <p className="alert alert-bad" role="alert">{error}</p> : null}
      <div className="row">
        <Button type="submit" variant="primary" disabled={retry.isPending}>Retry with this payload</Button>
      </div>
    </form>
  );
}
