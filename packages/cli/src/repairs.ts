import { userInfo } from "node:os";
import { ACTOR_NAME_MAX, actorNameProblem, type AdminRepairs, type Jfast } from "@jfast/runtime";
import { UsageError } from "./errors.js";

/**
 * Who a repair is done as: the name given with `--as`, else `cli:<os user>`. Checked before the service opens,
 * so a bad name changes nothing.
 */
export function repairActor(as: string | undefined): string {
  if (as === undefined) return cliActor();
  const problem = actorNameProblem(as);
  if (problem !== null) throw new UsageError(`--as: ${problem}; give a printable name of at most ${ACTOR_NAME_MAX} characters, e.g. --as ops-oncall`);
  return as;
}

/** The operating system user running the command, as the audit trail names them. */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return "cli";
  }
}

/**
 * The admin API's repairs acting as `actor`, so every repair from the command line (`jfast jobs retry | discard |
 * cancel | run-now | delete`, `jfast flows cancel | retry`, `jfast queue pause | resume`, `jfast outbox retry | discard`) is audited as the same
 * action from the admin API is (docs/admin-api.md#audit-trail).
 */
export async function cliRepairs(jfast: Jfast, io: { err(text: string): void }, actor: string): Promise<AdminRepairs> {
  const repairs = await jfast.repairs(actor);
  if (repairs.auditStore === "memory") {
    // Without a database the trail lives in each process; this one ends with the command.
    io.err("jfast: note: this service has no database plugin, so its audit trail is kept in each process's memory; this command's entry is not kept (jfast docs admin-api#audit-trail)\n");
  }
  return repairs;
}
