import type { DeadOutboxRow } from "@jfast/runtime";
import { describeError } from "./dead-letters.js";
import { ago, formatTable, oneLine } from "./table.js";

/** The human form of `jfast outbox dead`: one row per dead outbox row, newest death first. */
export function formatDeadOutboxRows(dead: readonly DeadOutboxRow[], now: number = Date.now()): string {
  if (dead.length === 0) return "no dead outbox rows\n";
  const rows = dead.map((d) => [
    d.id,
    `${d.attempts}/${d.maxAttempts}`,
    `${d.diedAt.replace(/\.\d{3}Z$/, "Z")} (${ago(d.diedAt, now)})`,
    oneLine(describeError(d.lastError), 120),
  ]);
  return formatTable(["ID", "ATTEMPTS", "DIED", "ERROR"], rows);
}
