import { readFileSync } from "node:fs";

/** The database layer's statements, one per file under sql/ (copied next to the compiled code by the build). */
export function loadSql(name: string): string {
  return readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
}
