import { readFileSync } from "node:fs";

/** The outbox's statements, one operation per file under sql/ (copied next to the compiled code by the build). */
function loadSql(name: string): string {
  return readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
}

export const SQL = {
  insert: loadSql("insert"),
  claim: loadSql("claim"),
  delivered: loadSql("delivered"),
  retry: loadSql("retry"),
  noteError: loadSql("note-error"),
  kill: loadSql("kill"),
  release: loadSql("release"),
  nextDue: loadSql("next-due"),
  health: loadSql("health"),
  pruneDelivered: loadSql("prune-delivered"),
  listDead: loadSql("list-dead"),
  rowsByRequest: loadSql("rows-by-request"),
  eventsByType: loadSql("events-by-type"),
  retryDead: loadSql("retry-dead"),
  discardDead: loadSql("discard-dead"),
  sealedPage: loadSql("sealed-page"),
  rewriteBody: loadSql("rewrite-body"),
} as const;
