import type { SqlDatabase } from "../core/sql-port.js";
import { NotSupportedError } from "../errors/jfast-error.js";
import { boundedDetail, type AlertEvent, type AlertStatus, type AlertStore, type StoredAlertRule } from "./alert-store.js";
import type { AlertRule } from "./config.js";

const LEASE = "alerts";

interface EventRow {
  id: string | number;
  alert: string;
  rule: AlertRule["rule"];
  state: AlertEvent["state"];
  value: number | null;
  threshold: number;
  at_ms: string | number;
  webhook: string;
  delivery: AlertEvent["delivery"];
  attempts: number;
  last_error: string | null;
  delivered_ms: string | number | null;
  detail: string | null;
  request_id: string | null;
  hop: NonNullable<AlertEvent["example"]>["hop"] | null;
  hop_service: string | null;
}

/** Alerts in the service's database (migration 0034; each entry's detail, 0039); the lease is a row of jfast_leases, as the pruner's. */
export function createSqlAlertStore(params: { db: SqlDatabase }): AlertStore {
  const { db } = params;
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === "42P01") {
        throw new NotSupportedError("this database has no tables for alerts (jfast_alert_*)", {
          hint: "start a process of this version once so that it applies its migrations (0034, 0039)",
          docs: "jfast docs alerts#stores",
          cause: error,
        });
      }
      throw error;
    }
  };
  return {
    kind: "sql",
    async claimLease({ owner, ttlMs }) {
      const rows = await db.query(
        `INSERT INTO jfast_leases AS l (name, owner, expires_at)
         VALUES ($1, $2, clock_timestamp() + $3::double precision * interval '1 millisecond')
         ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
           WHERE l.expires_at <= clock_timestamp() OR l.owner = EXCLUDED.owner
         RETURNING owner`,
        [LEASE, owner, ttlMs],
      );
      return rows.length === 1;
    },
    async releaseLease({ owner }) {
      await db.query("UPDATE jfast_leases SET expires_at = clock_timestamp() WHERE name = $1 AND owner = $2", [LEASE, owner]);
    },
    rules: () =>
      guarded(async () => {
        const rows = await db.query<{ spec: AlertRule | string; updated_ms: string | number; updated_by: string | null }>(
          "SELECT spec, extract(epoch FROM updated_at) * 1000 AS updated_ms, updated_by FROM jfast_alert_rules ORDER BY name",
        );
        return rows.map((r): StoredAlertRule => ({ rule: typeof r.spec === "string" ? (JSON.parse(r.spec) as AlertRule) : r.spec, updatedAt: Number(r.updated_ms), updatedBy: r.updated_by }));
      }),
    saveRule: ({ rule, create, by }) =>
      guarded(async () => {
        const sql = create
          ? "INSERT INTO jfast_alert_rules (name, spec, updated_by) VALUES ($1, $2::jsonb, $3) ON CONFLICT (name) DO NOTHING RETURNING name"
          : "UPDATE jfast_alert_rules SET spec = $2::jsonb, updated_by = $3, updated_at = now() WHERE name = $1 RETURNING name";
        return (await db.query(sql, [rule.name, JSON.stringify(rule), by])).length === 1;
      }),
    deleteRule: ({ name }) => guarded(async () => (await db.query("DELETE FROM jfast_alert_rules WHERE name = $1 RETURNING name", [name])).length === 1),
    statuses: () =>
      guarded(async () => {
        const rows = await db.query<{ name: string; state: AlertStatus["state"]; changed_ms: string | number; value: number | null }>(
          "SELECT name, state, extract(epoch FROM changed_at) * 1000 AS changed_ms, value FROM jfast_alert_states",
        );
        return new Map(rows.map((r) => [r.name, { name: r.name, state: r.state, changedAt: Number(r.changed_ms), value: r.value === null ? null : Number(r.value) }]));
      }),
    setStatus: (s) =>
      guarded(async () => {
        await db.query(
          `INSERT INTO jfast_alert_states (name, state, changed_at, value) VALUES ($1, $2, $3, $4)
           ON CONFLICT (name) DO UPDATE SET state = EXCLUDED.state, changed_at = EXCLUDED.changed_at, value = EXCLUDED.value`,
          [s.name, s.state, new Date(s.changedAt).toISOString(), s.value],
        );
      }),
    forgetStatus: ({ name }) =>
      guarded(async () => {
        await db.query("DELETE FROM jfast_alert_states WHERE name = $1", [name]);
      }),
    record: (e) =>
      guarded(async () => {
        const { detail, example } = boundedDetail(e);
        const [row] = await db.query<{ id: string | number }>(
          `INSERT INTO jfast_alert_history (alert, rule, state, value, threshold, at, webhook, delivery, attempts, last_error, delivered_at, detail, request_id, hop, hop_service)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
          [
            e.alert,
            e.rule,
            e.state,
            e.value,
            e.threshold,
            new Date(e.at).toISOString(),
            e.webhook,
            e.delivery,
            e.attempts,
            e.lastError,
            e.deliveredAt === null ? null : new Date(e.deliveredAt).toISOString(),
            detail,
            example?.requestId ?? null,
            example?.hop ?? null,
            example?.service ?? null,
          ],
        );
        return String(row!.id);
      }),
    updateDelivery: ({ id, delivery, attempts, lastError, deliveredAt }) =>
      guarded(async () => {
        await db.query("UPDATE jfast_alert_history SET delivery = $2, attempts = $3, last_error = $4, delivered_at = $5 WHERE id = $1", [
          id,
          delivery,
          attempts,
          lastError,
          deliveredAt === null ? null : new Date(deliveredAt).toISOString(),
        ]);
      }),
    history: ({ alert, limit }) =>
      guarded(async () => {
        const rows = await db.query<EventRow>(
          `SELECT id, alert, rule, state, value, threshold, extract(epoch FROM at) * 1000 AS at_ms, webhook, delivery, attempts, last_error,
                  extract(epoch FROM delivered_at) * 1000 AS delivered_ms, detail, request_id, hop, hop_service
             FROM jfast_alert_history WHERE ($1::text IS NULL OR alert = $1) ORDER BY id DESC LIMIT $2`,
          [alert ?? null, limit],
        );
        return rows.map((r) => ({
          id: String(r.id),
          alert: r.alert,
          rule: r.rule,
          state: r.state,
          value: r.value === null ? null : Number(r.value),
          threshold: Number(r.threshold),
          at: Number(r.at_ms),
          webhook: r.webhook,
          delivery: r.delivery,
          attempts: Number(r.attempts),
          lastError: r.last_error,
          deliveredAt: r.delivered_ms === null ? null : Number(r.delivered_ms),
          detail: r.detail,
          example: r.request_id !== null && r.hop !== null ? { requestId: r.request_id, hop: r.hop, service: r.hop_service ?? "" } : null,
        }));
      }),
    // The connection belongs to the database provider, which closes it.
    async close() {},
  };
}
