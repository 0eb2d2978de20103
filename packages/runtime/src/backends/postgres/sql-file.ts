import { readFileSync } from "node:fs";

/**
 * One of the backend's statements, from its file under sql/ (each file's header names its parameters, its result and
 * the index it relies on); the build copies them next to the output. On its own, apart from load-sql.ts's map of
 * every statement, for code that needs one: the heartbeat thread (lease-extender.ts) reads extend-leases.sql
 * alone rather than all of them again in its isolate.
 */
export function loadSql(name: string): string {
  return readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
}
