"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "./button";
import { Drawer } from "./drawer";
import { useServiceTRPC } from "~/trpc/provider";
import { formFields, SchemaForm } from "./schema-form";

/** What a "Duplicate" fills the dialog with. */
export interface JobDraft {
  service: string;
  task: string;
  payload: unknown;
  priority?: number | undefined;
  tenant?: string | null | undefined;
}

const EDITOR = { height: "auto", padding: 8, fontFamily: "var(--mono, ui-monospace, monospace)", minWidth: 320 } as const;

/**
 * "New job": a task of the service, its payload as JSON, an optional delay, priority and tenant. The service checks
 * the payload against the task's schema (a refusal names each bad field) and records the job in its audit trail.
 */
export function NewJobDialog({ services, draft, onClose, onDone }: { services: string[]; draft: JobDraft | null; onClose: () => void; onDone: (text: string) => void }) {
  const [service, setService] = useState(draft?.service ?? services[0] ?? "");
  const trpc = useServiceTRPC(service);
  const queryClient = useQueryClient();
  const tasks = useQuery(trpc.overview.tasks.queryOptions(undefined, { staleTime: 60_000, refetchInterval: false }));
  const [task, setTask] = useState(draft?.task ?? "");
  const [payload, setPayload] = useState(JSON.stringify(draft?.payload ?? {}, null, 2));
  const [delay, setDelay] = useState("0");
  const [priority, setPriority] = useState(String(draft?.priority ?? 5));
  const [tenant, setTenant] = useState(draft?.tenant ?? "");
  const [problem, setProblem] = useState<string | null>(null);
  const chosen = task || tasks.data?.tasks[0] || "";
  const schema = useQuery({ ...trpc.jobs.taskSchema.queryOptions({ task: chosen }, { staleTime: 60_000, refetchInterval: false }), enabled: chosen !== "" });
  const fields = formFields(schema.data?.jsonSchema);
  const current = (() => {
    try {
      const parsed: unknown = JSON.parse(payload || "{}");
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  })();
  const create = useMutation({
    ...trpc.jobs.create.mutationOptions(),
    onSuccess: (job) => {
      onDone(`Enqueued job ${job.id} (${job.task}) on ${service}.`);
      onClose();
    },
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const submit = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload || "{}");
    } catch (error) {
      setProblem(`The payload is not JSON: ${(error as Error).message}`);
      return;
    }
    setProblem(null);
    const delayMs = Math.round(Number(delay) * 1000);
    create.mutate({ task: chosen, payload: parsed, priority: Number(priority), ...(delayMs > 0 ? { delayMs } : {}), ...(tenant.trim() ? { tenant: tenant.trim() } : {}) });
  };
  const error = problem ?? create.error?.message ?? null;
  return (
    <Drawer title={draft ? `Duplicate a ${draft.task} job` : "New job"} onClose={onClose}>
      <form
        className="stack"
        aria-label="New job"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <div className="row">
          <label className="field">
            Service
            <select className="input" value={service} onChange={(e) => { setService(e.target.value); setTask(""); }}>
              {services.map((s) => (
                <option key={s} value={s}>{s}</option>
              ))}
            </select>
          </label>
          <label className="field">
            Task
            <select className="input" value={chosen} onChange={(e) => setTask(e.target.value)}>
              {(tasks.data?.tasks ?? (chosen ? [chosen] : [])).map((t) => (
                <option key={t} value={t}>{t}</option>
              ))}
            </select>
          </label>
        </div>
        {fields && current ? (
          <SchemaForm fields={fields} value={current} onChange={(next) => setPayload(JSON.stringify(next, null, 2))} />
        ) : schema.data?.hasSchema ? (
          <p className="muted">This task checks its payload with a schema the service cannot describe as fields: write it as JSON.</p>
        ) : null}
        <label className="field">
          Payload (JSON)
          <textarea className="input" style={EDITOR} rows={8} value={payload} onChange={(e) => setPayload(e.target.value)} spellCheck={false} />
        </label>
        <div className="row">
          <label className="field">
            Delay (seconds)
            <input className="input" type="number" min={0} value={delay} onChange={(e) => setDelay(e.target.value)} />
          </label>
          <label className="field">
            Priority (0 first, 9 last)
            <input className="input" type="number" min={0} max={9} value={priority} onChange={(e) => setPriority(e.target.value)} />
          </label>
          <label className="field">
            Tenant
            <input className="input" value={tenant} onChange={(e) => setTenant(e.target.value)} placeholder="none" />
          </label>
        </div>
        <p className="muted">Checked against the task&apos;s schema when it has one; recorded in the service&apos;s audit trail under your name.</p>
        {error ? <p className="alert alert-bad" role="alert">{error}</p> : null}
        <div className="row">
          <Button type="submit" variant="primary" disabled={create.isPending || !chosen}>Enqueue job</Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Drawer>
  );
}
