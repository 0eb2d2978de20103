import { loadSql } from "./sql-file.js";

export { loadSql };

/** The backend's statements, one operation per file under sql/ (sql-file.ts), read once at load. */
export const SQL = {
  checkSchema: loadSql("check-schema"),
  enqueue: loadSql("enqueue"),
  enqueueFresh: withoutConflictCheck(loadSql("enqueue")),
  enqueueNotifying: notifying(loadSql("enqueue")),
  enqueueFreshNotifying: notifying(withoutConflictCheck(loadSql("enqueue"))),
  enqueueHandOff: loadSql("enqueue-hand-off"),
  enqueueUnique: loadSql("enqueue-unique"),
  committedIds: loadSql("committed-ids"),
  uniquePeriods: loadSql("unique-periods"),
  uniqueHolders: loadSql("unique-holders"),
  claim: loadSql("claim"),
  claimOne: claimOfOne(loadSql("claim")),
  claimDurable: durableClaim(loadSql("claim")),
  claimOneDurable: claimOfOne(durableClaim(loadSql("claim"))),
  claimCandidates: loadSql("claim-candidates"),
  claimLimitsLock: loadSql("claim-limits-lock"),
  claimLimited: loadSql("claim-limited"),
  claimKeyed: loadSql("claim-keyed"),
  claimFair: loadSql("claim-fair"),
  claimFairAlone: fairClaimAlone(loadSql("claim-fair")),
  fairKeysDrop: loadSql("fair-keys-drop"),
  fairKeysMissing: loadSql("fair-keys-missing"),
  fairPlace: loadSql("fair-place"),
  pruneFairKeysLock: loadSql("prune-fair-keys-lock"),
  pruneKeyTurns: loadSql("prune-key-turns"),
  pruneKeyStarts: loadSql("prune-key-starts"),
  setLimitKeysMissing: loadSql("set-limit-keys-missing"),
  listBlockedKeys: loadSql("list-blocked-keys"),
  skipBlockedKey: loadSql("skip-blocked-key"),
  setLimits: loadSql("set-limits"),
  limitUsage: loadSql("limit-usage"),
  quarantine: loadSql("quarantine"),
  extendLeases: loadSql("extend-leases"),
  complete: loadSql("complete"),
  completeDelete: loadSql("complete-delete"),
  completeResults: loadSql("complete-results"),
  completeTimed: loadSql("complete-timed"),
  completeFlow: loadSql("complete-flow"),
  setProgress: loadSql("set-progress"),
  retry: loadSql("retry"),
  kill: loadSql("kill"),
  expire: loadSql("expire"),
  expireDue: loadSql("expire-due"),
  setDeadlines: loadSql("set-deadlines"),
  debounceFold: loadSql("debounce-fold"),
  debounceRegister: loadSql("debounce-register"),
  release: loadSql("release"),
  snooze: loadSql("snooze"),
  cancel: loadSql("cancel"),
  nextDue: loadSql("next-due"),
  depths: loadSql("depths"),
  depthsByTask: loadSql("depths-by-task"),
  depthsEstimate: loadSql("depths-estimate"),
  listDead: loadSql("list-dead"),
  retryDead: loadSql("retry-dead"),
  retryDeadAll: loadSql("retry-dead-all"),
  discardDead: loadSql("discard-dead"),
  discardDeadAll: loadSql("discard-dead-all"),
  getJob: loadSql("get-job"),
  jobsByRequest: loadSql("jobs-by-request"),
  searchDead: loadSql("search-dead"),
  listDue: listing(loadSql("list-due")),
  listScheduled: listing(loadSql("list-scheduled")),
  listDeadPage: listing(loadSql("list-dead-page")),
  listFinished: listing(loadSql("list-finished")),
  runNow: loadSql("run-now"),
  deleteJob: loadSql("delete-job"),
  updateJob: loadSql("update-job"),
  pruneFinished: loadSql("prune-finished"),
  pruneFinishedCount: loadSql("prune-finished-count"),
  pruneDead: loadSql("prune-dead"),
  pruneDeadCount: loadSql("prune-dead-count"),
  claimLease: loadSql("claim-lease"),
  releaseLease: loadSql("release-lease"),
  enqueueFlow: loadSql("enqueue-flow"),
  spawnSteps: loadSql("spawn-steps"),
  flowParents: loadSql("flow-parents"),
  getFlow: loadSql("get-flow"),
  listFlows: loadSql("list-flows"),
  cancelFlow: loadSql("cancel-flow"),
  upsertWorker: loadSql("upsert-worker"),
  removeWorker: loadSql("remove-worker"),
  listWorkers: loadSql("list-workers"),
} as const;

/** A listing statement written oldest first, in its four forms: order, and with or without a cursor. */
export interface ListingSql {
  oldest: { first: string; after: string };
  newest: { first: string; after: string };
}

/**
 * The newest-first form turns every ASC into DESC and the cursor's `> $5` into `< $5`; the first page's form
 * drops the cursor's condition (keeping $5 and $6 typed, sent as nulls). Derived, so the four cannot drift.
 */
function listing(sql: string): ListingSql {
  // Every cursor line: a statement may read two indexes (list-scheduled.sql), each from the cursor.
  const cursorLine = /^ {4}AND .* [<>] \(?\$5::.*$/m;
  if (!cursorLine.test(sql) || !/ ASC\b/.test(sql)) throw new Error("a listing statement must order ASC and continue with `AND ... > $5` on its own line");
  const newest = sql.replace(/ (ASC|DESC)\b/g, (_m, dir: string) => (dir === "ASC" ? " DESC" : " ASC")).replace(/ > (\(?\$5::)/g, " < $1");
  const first = (text: string) => text.replace(new RegExp(cursorLine.source, "gm"), "    AND $5::text IS NULL AND $6::bigint IS NULL");
  return { oldest: { first: first(sql), after: sql }, newest: { first: first(newest), after: newest } };
}

/**
 * claim.sql narrowed to the one job whose id is its $7: the claim's fallback when the statement fails on a row
 * it cannot process (claim-candidates.sql). Derived, so the two cannot drift.
 */
function claimOfOne(sql: string): string {
  const from = "  WHERE queue = $1 AND phase = 'open'";
  if (!sql.includes(from)) throw new Error(`claim.sql no longer has "${from.trim()}", which the one-job claim narrows`);
  return sql.replace(from, "  WHERE id = $7::text AND queue = $1 AND phase = 'open'");
}

/**
 * claim.sql without its one-time filter that turns synchronous_commit off for the claim's transaction
 * (`[plugin.queue] durable_claims = true`): the claim then commits under the server's setting. Derived, so the
 * two cannot drift.
 */
function durableClaim(sql: string): string {
  const from = "      AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'\n";
  if (!sql.includes(from)) throw new Error(`claim.sql no longer has "${from.trim()}", which durable_claims removes`);
  return sql.replace(from, "");
}

/**
 * claim-fair.sql run on its own, not in a transaction (a fair task that counts nothing at claim): it turns
 * synchronous_commit off for its own transaction as claim.sql does, unless durable_claims (claimFair then).
 * Derived, so the two cannot drift.
 */
function fairClaimAlone(sql: string): string {
  const from = "  FROM jfast_task_limits WHERE queue = $1 AND task = ANY($6::text[]) AND fair\n";
  if (!sql.includes(from)) throw new Error(`claim-fair.sql no longer has "${from.trim()}", which its claim on its own extends`);
  return sql.replace(from, `${from}    AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'\n`);
}

/**
 * enqueue.sql without its ON CONFLICT clause, for a batch whose ids were all generated in this process for jobs
 * never handed to a backend before (`firstHandOff` in core/job.ts): such an id cannot be in the table yet, and a
 * plain insert skips the speculative insertion ON CONFLICT needs per row. Every row is then inserted or the
 * statement fails, so it answers with their number instead of every id. Derived, so the two cannot drift.
 */
function withoutConflictCheck(sql: string): string {
  const replacements: Array<[string, string]> = [
    ["  ON CONFLICT (id) DO NOTHING\n", ""],
    ["  RETURNING id\n", "  RETURNING 1\n"],
    ["SELECT id FROM inserted", "SELECT count(*) AS inserted FROM inserted"],
  ];
  for (const [from, to] of replacements) {
    if (!sql.includes(from)) throw new Error(`enqueue.sql no longer has "${from.trim()}", which the first-hand-off statement rewrites`);
    sql = sql.replace(from, to);
  }
  return sql;
}

/**
 * enqueue.sql (or its first-hand-off form) that also wakes workers as it commits: a NOTIFY on the channel $17,
 * once per statement and only when a row was inserted (the uncorrelated subquery runs once, and only then). The
 * backend's own enqueue runs it when no wake-up went to the channel in the last window (wake-coalescer.ts), so a
 * lone enqueue wakes workers as fast as it can; one notifying commit per window does not hold the others up.
 * Derived, so the forms cannot drift.
 */
function notifying(sql: string): string {
  const last = /^SELECT (id|count\(\*\) AS inserted) FROM inserted$/m;
  if (!last.test(sql)) throw new Error("enqueue.sql no longer ends with the select of the inserted rows, which the notifying form extends");
  return sql.replace(last, (_line, columns: string) => `SELECT ${columns}, (SELECT pg_notify($17, '')) AS notified FROM inserted`);
}
