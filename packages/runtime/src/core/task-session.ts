import type { ExtractTablesWithRelations } from "drizzle-orm";
import type { PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";

/** A drizzle transaction on the primary database: what `transaction(fn)` hands `fn`, and a task's `session`. */
export type TaskSession = PgTransaction<PgQueryResultHKT, Record<string, never>, ExtractTablesWithRelations<Record<string, never>>>;
