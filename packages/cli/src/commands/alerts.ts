import type { AlertEventView, AlertRuleView } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { CliError } from "../errors.js";
import { ago, formatTable } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { cliActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "alerts",
  summary: "list the alert rules with their state (ok, firing, resolved) and the latest notifications",
  description: `
Lists the service's alert rules, those of jfast.toml and those made at run time, as the admin API's alerts.list
does: name, rule, scope (task, queue, Kafka topic or the whole service; a promise's events and deadline), threshold and window, state (ok, firing, resolved)
with since when and the value it changed on; then the newest changes of state with their delivery (delivered,
pending, or failed with the last error) and what each named (a promise's late request and hop, a kafka_lag rule's
worst group, topic and partition). --json prints an array of the rules, each with its history (newest
first). Webhooks are shown by origin only. See jfast docs alerts.`,
  flags: {
    json: { type: "boolean", description: "print the rules and their history as a JSON array" },
    root: ROOT_FLAG,
  },
  examples: ["jfast alerts", "jfast alerts --json | jq '.[] | select(.state == \"firing\") | .name'"],
  docs: "jfast docs cli#jfast-alerts",
  async run({ flags, io }) {
    const { view, events } = await withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => (await jfast.repairs(cliActor())).listAlerts({ limit: 200 }));
    if (!view.enabled) {
      throw new CliError(view.reason ?? "this service keeps no alerts", { code: "NOT_SUPPORTED", hint: "enable the database plugin (a RabbitMQ queue keeps no alerts without it): alerts are then kept in jfast_alert_* tables", docs: "jfast docs alerts#stores" });
    }
    if (flags.json) {
      io.out(`${JSON.stringify(view.alerts.map((a) => ({ ...a, history: events.filter((e) => e.alert === a.name) })), null, 2)}\n`);
      return 0;
    }
    io.out(formatAlerts(view.alerts, events));
    return 0;
  },
});

function scope(a: AlertRuleView): string {
  if (a.rule === "promise") return `${a.when} → ${a.then} within ${a.within}`;
  return a.task ? `task ${a.task}` : a.queue ? `queue ${a.queue}` : a.topic ? `topic ${a.topic}` : "service";
}

function formatAlerts(alerts: readonly AlertRuleView[], events: readonly AlertEventView[], now: number = Date.now()): string {
  if (alerts.length === 0) return "no alert rule: add [[alerts]] to jfast.toml (jfast docs alerts)\n";
  const rules = formatTable(
    ["NAME", "RULE", "SCOPE", "THRESHOLD", "WINDOW", "STATE", "SINCE", "VALUE", "SOURCE"],
    alerts.map((a) => [a.name, a.rule, scope(a), String(a.threshold), a.window, a.state, a.changedAt ? ago(a.changedAt, now) : "-", a.value === null ? "-" : String(a.value), a.source]),
  );
  if (events.length === 0) return rules;
  const history = formatTable(
    ["AT", "ALERT", "STATE", "VALUE", "DELIVERY", "ATTEMPTS", "DETAIL", "ERROR"],
    events.slice(0, 20).map((e) => [ago(e.at, now), e.alert, e.state, e.value === null ? "-" : String(e.value), e.delivery, String(e.attempts), e.detail ?? "", e.lastError ?? ""]),
  );
  return `${rules}\n${history}`;
}
