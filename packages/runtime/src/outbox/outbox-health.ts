import type { AttemptError } from "../core/job.js";
import type { SqlExecutor } from "../core/sql-port.js";
import { SQL } from "./load-sql.js";
import type { RelayStatus } from "./relay.js";

export interface OutboxHealth {
  status: "ok" | "degraded" | "unavailable";
  /** Rows waiting for the relay (new, backing off, or being sent). */
  pending: number;
  /** Pending rows whose delivery failed at least once. */
  failing: number;
  dead: number;
  /** Age of the oldest pending row in seconds (0 when none): how far behind the relay is. */
  lagSeconds: number;
  /** The latest error of a failing row. */
  lastError: Pick<AttemptError, "class" | "message" | "at" | "attempt"> | null;
  relay: RelayStatus | null;
  reason?: string;
  error?: string;
  [key: string]: unknown;
}

/**
 * The outbox check of /ready (and of the admin API's outbox view). `degraded` from the first failed
 * delivery for as long as a row keeps failing, and while dead rows exist; `unavailable` when the database
 * cannot be queried. A backlog alone is not degraded: lag is reported for alerting on its own threshold.
 */
export async function outboxHealth(db: SqlExecutor, relay: RelayStatus | null): Promise<OutboxHealth> {
  let row: { pending: number; failing: number; dead: number; lag_ms: number | string | null; last_error: AttemptError | string | null } | undefined;
  try {
    [row] = await db.query(SQL.health);
  } catch (error) {
    return {
      status: "unavailable",
      pending: 0,
      failing: 0,
      dead: 0,
      lagSeconds: 0,
      lastError: null,
      relay,
      error: `cannot read the outbox: ${(error as Error).message}`,
    };
  }
  const pending = Number(row?.pending ?? 0);
  const failing = Number(row?.failing ?? 0);
  const dead = Number(row?.dead ?? 0);
  const lagSeconds = row?.lag_ms === null || row?.lag_ms === undefined ? 0 : Math.max(0, Number(row.lag_ms) / 1000);
  const raw = typeof row?.last_error === "string" ? (JSON.parse(row.last_error) as AttemptError) : (row?.last_error ?? null);
  const lastError = raw ? { class: raw.class, message: raw.message, at: raw.at, attempt: raw.attempt } : null;
  const reasons: string[] = [];
  if (failing > 0) reasons.push(`${failing} row(s) failing delivery${lastError ? ` (last: ${lastError.class}: ${firstLine(lastError.message)})` : ""}`);
  if (dead > 0) reasons.push(`${dead} dead row(s): inspect with \`jfast outbox dead\``);
  if (relay?.databaseError) reasons.push(`the relay cannot use the database: ${relay.databaseError}`);
  return {
    status: reasons.length > 0 ? "degraded" : "ok",
    pending,
    failing,
    dead,
    lagSeconds: Math.round(lagSeconds * 1000) / 1000,
    lastError,
    relay,
    ...(reasons.length > 0 ? { reason: reasons.join("; ") } : {}),
  };
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0]!;
}
