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
      docs: "jfast docs postgres#sessions-and-row-level-security",
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
 * The text is scanned as PostgreSQL lexes it, so a `$1` or `--` inside a string literal, a quoted
 * identifier, a dollar-quoted body or a comment is left alone; comments are dropped.
 */
export function toDrizzleSql(text: string, params: readonly unknown[]): SQL {
  const query = sql.empty();
  let raw = "";
  let i = 0;
  const flush = () => {
    if (raw) query.append(sql.raw(raw));
    raw = "";
  };
  while (i < text.length) {
    const rest = text.slice(i);
    const ch = text[i]!;
    if (rest.startsWith("--")) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end;
      continue;
    }
    if (rest.startsWith("/*")) {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
      raw += " ";
      continue;
    }
    if (ch === "'" || ch === '"') {
      // '' (or "") inside is an escaped quote: the scan simply continues past it.
      let end = i + 1;
      for (;;) {
        end = text.indexOf(ch, end);
        if (end === -1) {
          end = text.length;
          break;
        }
        if (text[end + 1] === ch) end += 2;
        else break;
      }
      raw += text.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    const dollarTag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(rest);
    if (dollarTag) {
      const tag = dollarTag[0];
      const close = text.indexOf(tag, i + tag.length);
      const end = close === -1 ? text.length : close + tag.length;
      raw += text.slice(i, end);
      i = end;
      continue;
    }
    const placeholder = /^\$(\d+)/.exec(rest);
    if (placeholder && !/[A-Za-z0-9_]/.test(text[i - 1] ?? "")) {
      const index = Number(placeholder[1]) - 1;
      if (index < 0 || index >= params.length) {
        throw new Error(`statement refers to $${placeholder[1]} but has ${params.length} parameter(s)`);
      }
      flush();
      // sql.param: one parameter even for an array (a bare array in sql`` would expand into a list).
      query.append(sql`${sql.param(params[index])}`);
      i += placeholder[0].length;
      continue;
    }
    raw += ch;
    i++;
  }
  flush();
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
    docs: "jfast docs postgres#sessions-and-row-level-security",
  });
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return value.constructor?.name ?? "an object";
}
