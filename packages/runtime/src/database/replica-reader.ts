import type { QueryOptions, SqlExecutor } from "../core/sql-port.js";
import { ErrorCode } from "../errors/codes.js";
import { JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";

/** How often a replica that cannot be reached is reported while reads fall back to the primary. */
const WARN_EVERY_MS = 60_000;

/**
 * Reads that go to `[plugin.database] read_url` (a streaming replica) instead of the primary: the admin API's
 * and /metrics' views (depths, job lists, dead letters, outbox lag). A replica that cannot be reached does not
 * blind the dashboard: the read runs on the primary, and a warning says so once a minute
 * (docs/postgres.md#reading-from-a-replica). Errors about the statement itself pass through.
 */
export function createReplicaReader(params: { replica: SqlExecutor; primary: SqlExecutor; logger: Logger }): SqlExecutor {
  const { replica, primary, logger } = params;
  let warnedAt = -Infinity;
  return {
    async query<R>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<R[]> {
      try {
        return await replica.query<R>(text, values, options);
      } catch (error) {
        if (!(error instanceof JfastError) || error.code !== ErrorCode.DATABASE_UNAVAILABLE) throw error;
        if (Date.now() - warnedAt >= WARN_EVERY_MS) {
          warnedAt = Date.now();
          logger.warn("the read replica cannot be reached; the dashboard's and /metrics' reads go to the primary meanwhile (jfast docs postgres#reading-from-a-replica)", {
            error: error.message,
          });
        }
        return primary.query<R>(text, values, options);
      }
    },
  };
}
