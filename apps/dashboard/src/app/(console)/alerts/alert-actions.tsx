"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { useServiceTRPC } from "~/trpc/provider";
import type { AdminOutputs } from "~/trpc/types";

export type AlertRow = AdminOutputs["alerts"]["list"]["alerts"][number];
export type AlertChange = { kind: "form"; service: string; alert: AlertRow | null } | { kind: "delete"; service: string; alert: AlertRow };

const RULES = [
  { value: "dead_letters", label: "dead letters in the window (count)" },
  { value: "failure_rate", label: "failed attempts in the window (%)" },
  { value: "queue_latency", label: "oldest waiting job (seconds)" },
  { value: "workers_below", label: "workers online below (workers)" },
  { value: "outbox_lag", label: "outbox behind, or a dead outbox row (seconds)" },
  { value: "schedule_late", label: "a schedule's tick late or missed (seconds)" },
  { value: "kafka_lag", label: "Kafka consumer group behind (messages)" },
  { value: "promise", label: "an event not followed by another in time, across services (broken requests)" },
] as const;

/** Creates an alert rule at run time, or replaces one: the fields of an [[alerts]] entry, checked by the service. */
export function AlertForm({ service, alert, onClose, onDone }: { service: string; alert: AlertRow | null; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(service);
  const [name, setName] = useState(alert?.name ?? "");
  const [rule, setRule] = useState<string>(alert?.rule ?? "dead_letters");
  const [scopeKind, setScopeKind] = useState<"service" | "task" | "queue" | "topic">(alert?.task ? "task" : alert?.queue ? "queue" : alert?.topic ? "topic" : "service");
  const [scope, setScope] = useState(alert?.task ?? alert?.queue ?? alert?.topic ?? "");
  const [when, setWhen] = useState(alert?.when ?? "");
  const [then, setThen] = useState(alert?.then ?? "");
  const [within, setWithin] = useState(alert?.within ?? "5m");
  const [threshold, setThreshold] = useState(String(alert?.threshold ?? 1));
  const [window, setWindow] = useState(alert?.window ?? "5m");
  const [cooldown, setCooldown] = useState(alert?.cooldown ?? "1m");
  const [webhook, setWebhook] = useState("");
  const [format, setFormat] = useState<"json" | "slack">(alert?.format ?? "json");
  const save = useMutation({
    mutationFn: async (input: Record<string, unknown>, context) => {
      const procedure = alert ? trpc.alerts.update.mutationOptions() : trpc.alerts.create.mutationOptions();
      return procedure.mutationFn!(input as never, context);
    },
    onSuccess: () => {
      onDone(`${alert ? "Saved" : "Created"} alert ${name} on ${service}.`);
      onClose();
    },
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  const submit = () => {
    const where =
      rule === "promise"
        ? { when, then, within }
        : scopeKind === "task"
          ? { task: scope }
          : scopeKind === "queue"
            ? { queue: scope }
            : scopeKind === "topic"
              ? { topic: scope }
              : {};
    save.mutate({ name, rule, ...where, threshold: Number(threshold), window, cooldown, webhook, format });
  };
  return (
    <Drawer title={alert ? `Edit alert ${alert.name}` : `New alert on ${service}`} onClose={onClose}>
      <form
        className="stack"
        aria-label={alert ? "Edit alert" : "New alert"}
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <label className="field">
          Name
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} readOnly={alert !== null} required placeholder="payments dying" />
        </label>
        <label className="field">
          Rule
          <select className="input" value={rule} onChange={(e) => setRule(e.target.value)}>
            {RULES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.value}: {r.label}
              </option>
            ))}
          </select>
        </label>
        {rule === "promise" ? (
          <div className="row">
            <label className="field">
              When
              <input className="input" value={when} onChange={(e) => setWhen(e.target.value)} required placeholder="invoice.paid" />
            </label>
            <label className="field">
              Then
              <input className="input" value={then} onChange={(e) => setThen(e.target.value)} required placeholder="shipment.created" />
            </label>
            <label className="field">
              Within
              <input className="input" value={within} onChange={(e) => setWithin(e.target.value)} required placeholder="5m" />
            </label>
          </div>
        ) : (
          <div className="row">
            <label className="field">
              Scope
              <select className="input" value={scopeKind} onChange={(e) => setScopeKind(e.target.value as "service" | "task" | "queue" | "topic")}>
                <option value="service">the whole service</option>
                <option value="task">one task</option>
                <option value="queue">one queue</option>
                <option value="topic">one Kafka topic (kafka_lag)</option>
              </select>
            </label>
            {scopeKind !== "service" ? (
              <label className="field">
                {scopeKind === "task" ? "Task" : scopeKind === "queue" ? "Queue" : "Topic"}
                <input className="input" value={scope} onChange={(e) => setScope(e.target.value)} required placeholder={scopeKind === "task" ? "payment.charge" : scopeKind === "queue" ? "default" : "orders"} />
              </label>
            ) : null}
          </div>
        )}
        <div className="row">
          <label className="field">
            Threshold
            <input className="input" type="number" min={0} step="any" value={threshold} onChange={(e) => setThreshold(e.target.value)} required />
          </label>
          <label className="field">
            Window
            <input className="input" value={window} onChange={(e) => setWindow(e.target.value)} placeholder="5m" />
          </label>
          <label className="field">
            Cool-down
            <input className="input" value={cooldown} onChange={(e) => setCooldown(e.target.value)} placeholder="1m" />
          </label>
        </div>
        <label className="field">
          Webhook URL{alert ? " (write it again: it is not shown)" : ""}
          <input className="input" type="url" value={webhook} onChange={(e) => setWebhook(e.target.value)} required placeholder="https://hooks.example.com/jfast" />
        </label>
        <label className="field">
          Body
          <select className="input" value={format} onChange={(e) => setFormat(e.target.value as "json" | "slack")}>
            <option value="json">jfast JSON</option>
            <option value="slack">Slack-compatible ({"{ text }"})</option>
          </select>
        </label>
        <p className="muted">Checked by the service as jfast.toml is; every process evaluates it from its next pass; recorded in its audit trail under your name.</p>
        {save.error ? (
          <p className="alert alert-bad" role="alert">
            {save.error.message}
          </p>
        ) : null}
        <div className="row">
          <Button type="submit" variant="primary" disabled={save.isPending || !name || !webhook}>
            {alert ? "Save alert" : "Create alert"}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Drawer>
  );
}

/** Deleting a run-time rule; its history stays. */
export function AlertDeleteConfirm({ change, onClose, onDone }: { change: Extract<AlertChange, { kind: "delete" }>; onClose: () => void; onDone: (text: string) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(change.service);
  const { name } = change.alert;
  const mutation = useMutation({
    mutationFn: async (_: void, context) => trpc.alerts.delete.mutationOptions().mutationFn!({ name }, context),
    onSuccess: () => {
      onDone(`Deleted alert ${name} on ${change.service}.`);
      onClose();
    },
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  });
  return (
    <Drawer title={`Delete alert ${name}`} onClose={onClose}>
      <div className="stack">
        <p>No process evaluates it any more; its history stays.</p>
        <p className="muted">The service records this in its audit trail under your name.</p>
        {mutation.error ? (
          <p className="alert alert-bad" role="alert">
            {mutation.error.message}
          </p>
        ) : null}
        <div className="row">
          <Button variant="danger" disabled={mutation.isPending} onClick={() => mutation.mutate()}>
            Delete {name}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </div>
    </Drawer>
  );
}
