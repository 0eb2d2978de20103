import type { AttemptError, DeadJob } from "@jfast/runtime";
import { ago, formatTable, oneLine } from "./table.js";

/** `ValueError: card declined`, the way a failure is named everywhere in jfast. */
export function describeError(error: AttemptError | null): string {
  if (!error) return "(no error recorded)";
  const text = `${error.class}: ${error.message}`;
  return error.reason && !text.includes(error.reason) ? `${text} [${error.reason}]` : text;
}

/** The human form of `jfast jobs dead`: one row per dead letter, in the order given (newest death first). */
export function formatDeadLetters(dead: readonly DeadJob[], now: number = Date.now()): string {
  if (dead.length === 0) return "no dead letters\n";
  const rows = dead.map((d) => [
    d.job.id,
    d.job.task,
    `${d.job.attempts}/${d.job.maxAttempts ?? "?"}`,
    `${d.diedAt.replace(/\.\d{3}Z$/, "Z")} (${ago(d.diedAt, now)})`,
    oneLine(describeError(d.lastError), 120),
  ]);
  return formatTable(["ID", "TASK", "ATTEMPTS", "DIED", "ERROR"], rows);
}
