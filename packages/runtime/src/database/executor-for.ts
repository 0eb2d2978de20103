import { sql, type SQL } from "drizzle-orm";
import type { SqlExecutor } from "../core/sql-port.js";
import { JfastError } from "../errors/jfast-error.js";
import { rowsOf } from "./rows-of.js";

interface DrizzleLike {
  execute(query: SQL): Promise<unknown>;
}
interface ClientLike {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

/**
 * Turns a caller's session into the port jfast's SQL runs through, so a write lands in *their*
 * transaction: a drizzle transaction (or database) over pg or PGlite, a node-postgres client the caller
 * put inside BEGIN, a PGlite transaction, or an executor jfast handed out itself.
 * A pg Pool is refused: each of its queries may run on a different connection, outside any transaction.
 */
export function executorFor(session: unknown): SqlExecutor {
  if (session === null || typeof session !== "object") throw notASession(session);
  if (isPool(session)) {
    throw new JfastError("a pg Pool is not a transaction: its queries commit on their own, on any connection", {
      code: "SESSION_INVALID",
      hint: "check a client out (const client = await pool.connect(); await client.query('BEGIN')) and pass the client, or pass a drizzle transaction",
      docs: "docs/postgres.md#sessions",
    });
  }
  if (typeof (session as ClientLike).query === "function") {
    const client = session as ClientLike;
    return {
      async query<R>(text: string, params?: readonly unknown[]) {
        return rowsOf<R>(await client.query(text, params ? [...params] : undefined));
      },
    };
  }
  if (typeof (session as DrizzleLike).execute === "function") {
    const drizzle = session as DrizzleLike;
    return {
      async query<R>(text: string, params?: readonly unknown[]) {
        return rowsOf<R>(await drizzle.execute(toDrizzleSql(text, params ?? [])));
      },
    };
  }
  throw notASession(session);
}

/**
 * `$n` placeholders become drizzle params in order of appearance (drizzle numbers them again itself).
 * Comments go first: statement headers name their parameters ("$1 queue"). jfast's statements never hold
 * `--` or `$<digits>` inside a string literal, which is what makes this text-level rewrite safe for them.
 */
export function toDrizzleSql(text: string, params: readonly unknown[]): SQL {
  const parts = text.replace(/--[^\n]*/g, "").split(/\$(\d+)/);
  const query = sql.empty();
  parts.forEach((part, i) => {
    if (i % 2 === 0) {
      if (part) query.append(sql.raw(part));
      return;
    }
    const index = Number(part) - 1;
    if (index < 0 || index >= params.length) throw new Error(`statement refers to $${part} but has ${params.length} parameter(s)`);
    // sql.param: one parameter even for an array (a bare array in sql`` would expand into a list).
    query.append(sql`${sql.param(params[index])}`);
  });
  return query;
}

function isPool(session: object): boolean {
  const s = session as Record<string, unknown>;
  return typeof s.connect === "function" && typeof s.totalCount === "number" && typeof s.idleCount === "number";
}

function notASession(session: unknown): JfastError {
  return new JfastError(`expected an open transaction (a drizzle transaction or a pg client inside BEGIN), got ${describe(session)}`, {
    code: "SESSION_INVALID",
    hint: "pass the transaction you are in: database.transaction(async (tx) => outbox.enqueue(tx, job))",
    docs: "docs/postgres.md#sessions",
  });
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return value.constructor?.name ?? "an object";
}
