"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { useServiceTRPC } from "~/trpc/provider";
import type { AdminOutputs } from "~/trpc/types";

export type ScheduleRow = AdminOutputs["schedules"]["list"]["schedules"][number];
export type ScheduleChange =
  | { kind: "form"; service: string; schedule: ScheduleRow | null }
  | { kind: "pause" | "resume" | "trigger" | "delete"; service: string; schedule: ScheduleRow };

const CONFIRM: Record<"pause" | "resume" | "trigger" | "delete", { label: string; explain: string; variant: "primary" | "danger" }> = {
  pause: { label: "Pause", explain: "No tick fires in any process until it is resumed; the ticks in between are skipped.", variant: "danger" },
  resume: { label: "Resume", explain: "It ticks again from its next tick; the ticks that passed while paused stay skipped.", variant: "primary" },
  trigger: { label: "Trigger", explain: "One job of the schedule is enqueued now, with its payload; its own ticks go on as before.", variant: "primary" },
  delete: { label: "Delete", explain: "Every process stops firing it. Jobs its ticks already enqueued stay.", variant: "danger" },
};

/** A row's buttons: pause or resume, trigger; edit and delete for a schedule made at run time only. */
export function ScheduleRowActions({ service, row, disabled, why, onChange }: { service: string; row: ScheduleRow; disabled: boolean; why?: string | undefined; onChange: (change: ScheduleChange) => void }) {
  const runtime = row.origin === "runtime";
  return (
    <div className="row" style={{ flexWrap: "nowrap" }}>
      {row.paused ? (
        <Button small variant="primary" disabled={disabled} title={why} aria-label={`Resume ${row.name}`} onClick={() => onChange({ kind: "resume", service, schedule: row })}>Resume</Button>
      ) : (
        <Button small disabled={disabled} title={why} aria-label={`Pause ${row.name}`} onClick={() => onChange({ kind: "pause", service, schedule: row })}>Pause</Button>
      )}
      <Button small disabled={disabled} title={why} aria-label={`Trigger ${row.name}`} onClick={() => onChange({ kind: "trigger", service, schedule: row })}>Trigger</Button>
      {runtime ? (
        <>
          <Button small disabled={disabled} title={why} aria-label={`Edit ${row.name}`} onClick={() => onChange({ kind: "form", service, schedule: row })}>Edit</Button>
          <Button small variant="danger" disabled={disabled} title={why} aria-label={`Delete ${row.name}`} onClick={() => onChange({ kind: "delete", service, schedule: row })}>Delete</Button>
        </>
      ) : (
        <span className="muted nowrap" title="declared in the service's code: edit or remove it there and deploy">declared in code</span>
      )}
    </div>
  );
}

/** The confirmation of pause, resume, trigger or delete; the service audits it under the person's name. */
export function ScheduleConfirm({ change, onClose, onDone }: { change: Extract<ScheduleChange, { kind: "pause" | "resume" | "trigger" | "delete" }>; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(change.service);
  const { name } = change.schedule;
  const verb = CONFIRM[change.kind];
  const mutation = useMutation({
    mutationFn: async (_: void, context) => {
      const procedure = trpc.schedules[change.kind].mutationOptions();
      return (await procedure.mutationFn!({ name }, context)) as { jobId?: string };
    },
    onSuccess: (result) => {
      onDone(
        change.kind === "trigger"
          ? `Triggered ${name} on ${change.service}: job ${result.jobId}.`
          : `${change.kind === "pause" ? "Paused" : change.kind === "resume" ? "Resumed" : "Deleted"} ${name} on ${change.service}.`,
      );
      onClose();
    },
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  return (
    <Drawer title={`${verb.label} schedule ${name}`} onClose={onClose}>
      <div className="stack">
        <p>{verb.explain}</p>
        <p>
          <code>{name}</code> (<code>{change.schedule.task}</code>, {change.schedule.expression}) on <strong>{change.service}</strong>
        </p>
        <p className="muted">The service records this in its audit trail under your name.</p>
        {mutation.error ? <p className="alert alert-bad" role="alert">{mutation.error.message}</p> : null}
        <div className="row">
          <Button variant={verb.variant} disabled={mutation.isPending} onClick={() => mutation.mutate()}>
            {verb.label} {name}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </div>
    </Drawer>
  );
}

/** Creates a schedule at run time, or edits one: the options a declared schedule takes, checked by the service. */
export function ScheduleForm({ service, schedule, tasks, onClose, onDone }: { service: string; schedule: ScheduleRow | null; tasks: string[]; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(service);
  const [name, setName] = useState(schedule?.name ?? "");
  const [task, setTask] = useState(schedule?.task ?? tasks[0] ?? "");
  const [kind, setKind] = useState<"cron" | "every">(schedule?.kind ?? "cron");
  const [cron, setCron] = useState(schedule?.kind === "cron" ? schedule.expression : "0 3 * * *");
  const [seconds, setSeconds] = useState(String(schedule?.everyMs ? schedule.everyMs / 1000 : 300));
  const [timezone, setTimezone] = useState(schedule?.kind === "cron" ? schedule.timezone : "UTC");
  const [payload, setPayload] = useState(JSON.stringify(schedule?.payload ?? {}, null, 2));
  const [catchUp, setCatchUp] = useState(schedule?.catchUp ?? true);
  const [problem, setProblem] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async (input: Record<string, unknown>, context) => {
      const procedure = schedule ? trpc.schedules.update.mutationOptions() : trpc.schedules.create.mutationOptions();
      return procedure.mutationFn!(input as never, context);
    },
    onSuccess: () => {
      onDone(`${schedule ? "Saved" : "Created"} schedule ${name} on ${service}.`);
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
    const when = kind === "cron" ? { cron, timezone } : { every: { seconds: Number(seconds) } };
    save.mutate({ name, task, ...when, payload: parsed, catchUp });
  };
  const error = problem ?? save.error?.message ?? null;
  return (
    <Drawer title={schedule ? `Edit schedule ${schedule.name}` : `New schedule on ${service}`} onClose={onClose}>
      <form
        className="stack"
        aria-label={schedule ? "Edit schedule" : "New schedule"}
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <label className="field">
          Name
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} readOnly={schedule !== null} required placeholder="report-weekly" />
        </label>
        <label className="field">
          Task
          <select className="input" value={task} onChange={(e) => setTask(e.target.value)}>
            {tasks.map((t) => (
              <option key={t} value={t}>{t}</option>
            ))}
          </select>
        </label>
        <fieldset className="row" style={{ border: 0, padding: 0 }}>
          <legend className="field">When</legend>
          <label className="row"><input type="radio" name="kind" checked={kind === "cron"} onChange={() => setKind("cron")} /> Cron</label>
          <label className="row"><input type="radio" name="kind" checked={kind === "every"} onChange={() => setKind("every")} /> Every</label>
        </fieldset>
        {kind === "cron" ? (
          <div className="row">
            <label className="field">
              Cron expression
              <input className="input" value={cron} onChange={(e) => setCron(e.target.value)} placeholder="0 3 * * *" />
            </label>
            <label className="field">
              Time zone
              <input className="input" value={timezone} onChange={(e) => setTimezone(e.target.value)} placeholder="Europe/Paris" />
            </label>
          </div>
        ) : (
          <label className="field">
            Every (seconds)
            <input className="input" type="number" min={1} value={seconds} onChange={(e) => setSeconds(e.target.value)} />
          </label>
        )}
        <label className="field">
          Payload (JSON)
          <textarea className="input" style={EDITOR} rows={6} value={payload} onChange={(e) => setPayload(e.target.value)} spellCheck={false} />
        </label>
        <label className="row">
          <input type="checkbox" checked={catchUp} onChange={(e) => setCatchUp(e.target.checked)} /> Fire the most recent missed tick after downtime (catch-up)
        </label>
        <p className="muted">Checked by the service as a schedule declared in code is; recorded in its audit trail under your name.</p>
        {error ? <p className="alert alert-bad" role="alert">{error}</p> : null}
        <div className="row">
          <Button type="submit" variant="primary" disabled={save.isPending || !name || !task}>{schedule ? "Save schedule" : "Create schedule"}</Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Drawer>
  );
}

/** A multi-line JSON field in the inputs' look (a fixed-height .input otherwise). */
export const EDITOR = { height: "auto", padding: 8, fontFamily: "var(--mono, ui-monospace, monospace)", minWidth: 320 } as const;
