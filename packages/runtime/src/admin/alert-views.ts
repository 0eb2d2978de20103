import type { AlertEvent } from "../alerts/alert-store.js";
import type { AlertRule } from "../alerts/config.js";
import type { AdminSources } from "./sources.js";

/** A webhook as the admin API shows it: its origin only (a Slack hook's path is its secret). */
export function shownWebhook(url: string): string {
  try {
    const { origin, pathname } = new URL(url);
    return pathname === "/" ? origin : `${origin}/…`;
  } catch {
    return "…";
  }
}

export interface AlertRuleView extends Omit<AlertRule, "webhook"> {
  webhook: string;
  /** `config`: from jfast.toml, read-only here; `runtime`: made with alerts.create. */
  source: "config" | "runtime";
  /** ok (never fired), firing, or resolved; with when it last changed and the value it changed on. */
  state: "ok" | "firing" | "resolved";
  changedAt: string | null;
  value: number | null;
  updatedBy: string | null;
}

export interface AlertsView {
  /** False when the service keeps no alerts (no store every process shares): `reason` says why. */
  enabled: boolean;
  reason: string | null;
  store: "sql" | "redis" | "memory" | null;
  alerts: AlertRuleView[];
}

export interface AlertEventView extends Omit<AlertEvent, "at" | "deliveredAt"> {
  at: string;
  deliveredAt: string | null;
}

export const NO_STORE = "alerts need a store every process shares: the database plugin, the Redis queue, or the memory queue (jfast docs alerts#stores)";

/** alerts.list and `jfast alerts`. */
export async function listAlertsView(sources: AdminSources): Promise<AlertsView> {
  const alerter = sources.alerts?.() ?? null;
  if (!alerter) return { enabled: false, reason: NO_STORE, store: null, alerts: [] };
  const rules = await alerter.list();
  return {
    enabled: true,
    reason: null,
    store: alerter.store.kind,
    alerts: rules.map((r) => ({
      ...r.rule,
      webhook: shownWebhook(r.rule.webhook),
      source: r.source,
      state: r.state,
      changedAt: r.changedAt === null ? null : new Date(r.changedAt).toISOString(),
      value: r.value,
      updatedBy: r.updatedBy,
    })),
  };
}

/** alerts.history and `jfast alerts`: newest first. */
export async function alertHistoryView(sources: AdminSources, input: { name?: string | undefined; limit: number }): Promise<{ events: AlertEventView[] }> {
  const alerter = sources.alerts?.() ?? null;
  if (!alerter) return { events: [] };
  const events = await alerter.store.history({ alert: input.name, limit: input.limit });
  return {
    events: events.map((e) => ({ ...e, webhook: shownWebhook(e.webhook), at: new Date(e.at).toISOString(), deliveredAt: e.deliveredAt === null ? null : new Date(e.deliveredAt).toISOString() })),
  };
}

