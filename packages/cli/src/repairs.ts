import type { AdminRepairs, Jfast } from "@jfast/runtime";
import { cliActor } from "./queue-pauses.js";

/**
 * The admin API's repairs acting as `cli:<os user>`, so `jfast jobs retry` and `jfast queue pause|resume` are
 * audited as the same actions from the admin API are (docs/admin-api.md#audit-trail).
 */
export async function cliRepairs(jfast: Jfast, io: { err(text: string): void }): Promise<AdminRepairs> {
  const repairs = await jfast.repairs(cliActor());
  if (repairs.auditStore === "memory") {
    // Without a database the trail lives in each process; this one ends with the command.
    io.err("jfast: note: this service has no database plugin, so its audit trail is kept in each process's memory; this command's entry is not kept (jfast docs admin-api#audit-trail)\n");
  }
  return repairs;
}
