/**
 * The one-method port that pg and PGlite share, so every line of SQL runs unchanged on both.
 * `$1…$n` placeholders, rows as plain objects.
 */
export interface SqlExecutor {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
}

export interface QueryOptions {
  /**
   * Prepare the statement once per connection under this name and reuse it (node-postgres): no parsing or
   * planning per call. One name, one text, always. Ignored where a driver has no use for it (PGlite).
   */
  name?: string;
}

/** A connection that can also open transactions and receive notifications. */
export interface SqlDatabase extends SqlExecutor {
  readonly driver: "pg" | "pglite";
  /** Runs `fn` in one transaction on one connection: commit on return, rollback on throw. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Subscribes to NOTIFY on `channel`; returns the unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
