import type { SQL } from "drizzle-orm";
import { requireDrizzle } from "./optional-drizzle.js";
import type { SqlExecutor } from "../core/sql-port.js";
import { JfastError } from "../errors/jfast-error.js";
import { rowsOf } from "./rows-of.js";

interface DrizzleLike {
  execute(query: SQL): Promise<unknown>;
}
interface ClientLike {
  query(text: string, params?: unknown[]): Promise<unknown>;
  getTransactionStatus?(): string | null;
}
/** A Knex instance or `trx`, or postgres.js's `sql`: callable, with their own ways to run raw SQL. */
interface SessionFunction {
  (...args: never[]): unknown;
  raw?(text: string, bindings: unknown[]): Promise<unknown>;
  isTransaction?: boolean;
  unsafe?(text: string, params: unknown[]): Promise<unknown>;
  savepoint?: unknown;
  begin?: unknown;
  typed?(value: unknown, oid: number): unknown;
}
interface KyselyLike {
  isTransaction: boolean;
  executeQuery(query: unknown): Promise<{ rows: unknown[] }>;
}
interface PrismaLike {
  $queryRawUnsafe(text: string, ...params: unknown[]): Promise<unknown>;
  $transaction?: unknown;
}

/** PostgreSQL's text type, which every parameter literal casts from. */
const TEXT_OID = 25;

function refused(message: string, hint: string): JfastError {
  return new JfastError(message, { code: "SESSION_INVALID", hint, docs: "jfast docs outbox#your-transaction-from-any-library" });
}

function functionSession(session: SessionFunction): SqlExecutor {
  if (typeof session.raw === "function" && typeof (session as { client?: unknown }).client === "object") {
    if (session.isTransaction !== true) {
      throw refused("a Knex instance is not a transaction: each query would commit on its own", "pass the trx of knex.transaction(async (trx) => outbox.enqueue(trx, job))");
    }
    const raw = session.raw.bind(session);
    return {
      async query<R>(text: string, params?: readonly unknown[]) {
        const { text: positional, values } = toQuestionMarks(text, params ?? []);
        return rowsOf<R>(await raw(positional, values));
      },
    };
  }
  if (typeof session.unsafe === "function") {
    if (session.savepoint === undefined) {
      throw refused("postgres.js's top-level sql is not a transaction: each query would commit on its own", "pass the sql of sql.begin(async (sql) => outbox.enqueue(sql, job))");
    }
    const unsafe = session.unsafe.bind(session);
    // jfast's parameters are values as node-postgres sends them: a string is text (an array or a JSON column as its
    // literal), which postgres.js would otherwise serialize by the column's type (JSON again, an array's elements).
    const asText = typeof session.typed === "function" ? (value: string) => session.typed!(value, TEXT_OID) : (value: string) => value;
    return {
      async query<R>(text: string, params?: readonly unknown[]) {
        return rowsOf<R>(await unsafe(text, params ? params.map((p) => (typeof p === "string" ? asText(p) : p)) : []));
      },
    };
  }
  throw notASession(session);
}

function kyselyExecutor(session: KyselyLike): SqlExecutor {
  if (session.isTransaction !== true) {
    throw refused("a Kysely instance is not a transaction: each query would commit on its own", "pass the trx of db.transaction().execute(async (trx) => outbox.enqueue(trx, job))");
  }
  return {
    async query<R>(text: string, params?: readonly unknown[]) {
      // Kysely is the caller's own dependency: its raw compiled query carries $n placeholders as they are.
      const { CompiledQuery } = (await import("kysely" as string)) as { CompiledQuery: { raw(sql: string, parameters?: unknown[]): unknown } };
      return rowsOf<R>(await session.executeQuery(CompiledQuery.raw(text, params ? [...params] : [])));
    },
  };
}

function prismaExecutor(session: PrismaLike): SqlExecutor {
  if (session.$transaction !== undefined) {
    throw refused("a Prisma client is not a transaction: each query would commit on its own", "pass the tx of prisma.$transaction(async (tx) => outbox.enqueue(tx, job))");
  }
  return {
    async query<R>(text: string, params?: readonly unknown[]) {
      return rowsOf<R>(await session.$queryRawUnsafe(text, ...(params ?? [])));
    },
  };
}

/**
 * `$n` placeholders as Knex's `?` bindings, in order of appearance (a `$n` used twice is bound twice), and a `?`
 * of the statement itself (a jsonb operator) escaped as Knex wants it. Literals, quoted names and comments are
 * scanned as toDrizzleSql scans them.
 */
export function toQuestionMarks(text: string, params: readonly unknown[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  let out = "";
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const ch = text[i]!;
    const skip = skippable(text, i);
    if (skip !== null) {
      out += text.slice(i, skip).replace(/\?/g, "\\?");
      i = skip;
      continue;
    }
    const placeholder = /^\$(\d+)/.exec(rest);
    if (placeholder && !/[A-Za-z0-9_]/.test(text[i - 1] ?? "")) {
      const index = Number(placeholder[1]) - 1;
      if (index < 0 || index >= params.length) throw new Error(`statement refers to $${placeholder[1]} but has ${params.length} parameter(s)`);
      values.push(params[index]);
      out += "?";
      i += placeholder[0].length;
      continue;
    }
    out += ch === "?" ? "\\?" : ch;
    i++;
  }
  return { text: out, values };
}

/** Where a comment, string literal, quoted name or dollar-quoted body starting at `i` ends; null when none starts. */
function skippable(text: string, i: number): number | null {
  const rest = text.slice(i);
  if (rest.startsWith("--")) {
    const end = text.indexOf("\n", i);
    return end === -1 ? text.length : end;
  }
  if (rest.startsWith("/*")) {
    const end = text.indexOf("*/", i + 2);
    return end === -1 ? text.length : end + 2;
  }
  const ch = text[i];
  if (ch === "'" || ch === '"') {
    let end = i + 1;
    for (;;) {
      end = text.indexOf(ch, end);
      if (end === -1) return text.length;
      if (text[end + 1] === ch) end += 2;
      else return end + 1;
    }
  }
  const dollarTag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(rest);
  if (dollarTag) {
    const close = text.indexOf(dollarTag[0], i + dollarTag[0].length);
    return close === -1 ? text.length : close + dollarTag[0].length;
  }
  return null;
}

/**
 * Turns a caller's session into the port jfast's SQL runs through, so a write lands in *their* transaction
 * (docs/outbox.md#your-transaction-from-any-library): a drizzle transaction (or database) over pg or PGlite, a
 * node-postgres client the caller put inside BEGIN, a PGlite transaction, a Knex `trx`, a Kysely `Transaction`, a
 * postgres.js `sql.begin` callback's `sql`, a Prisma interactive transaction's client, or an executor jfast handed
 * out itself. What cannot be inside a transaction is refused with SESSION_INVALID naming the fix: a pg Pool or a
 * client with no BEGIN (each query would commit on its own), a Knex or Kysely instance, postgres.js's top-level
 * `sql`, a Prisma client outside `$transaction`.
 */
export function executorFor(session: unknown): SqlExecutor {
  if (typeof session === "function") return functionSession(session as SessionFunction);
  if (session === null || typeof session !== "object") throw notASession(session);
  if (typeof (session as KyselyLike).executeQuery === "function" && "isTransaction" in session) return kyselyExecutor(session as KyselyLike);
  if (typeof (session as PrismaLike).$queryRawUnsafe === "function") return prismaExecutor(session as PrismaLike);
  if (isPool(session)) {
    throw new JfastError("a pg Pool is not a transaction: its queries commit on their own, on any connection", {
      code: "SESSION_INVALID",
      hint: "check a client out (const client = await pool.connect(); await client.query('BEGIN')) and pass the client, or pass a drizzle transaction",
      docs: "jfast docs postgres#sessions-and-row-level-security",
    });
  }
  if (typeof (session as ClientLike).query === "function") {
    const client = session as ClientLike;
    // node-postgres 8.12+ tells whether the connection is inside a transaction ("T"), idle ("I") or failed ("E").
    if (typeof client.getTransactionStatus === "function" && client.getTransactionStatus() === "I") {
      throw new JfastError("this pg client is not inside a transaction: each statement would commit on its own", {
        code: "SESSION_INVALID",
        hint: "run await client.query('BEGIN') first (and COMMIT or ROLLBACK after), or pass a drizzle transaction",
        docs: "jfast docs outbox#your-transaction-from-any-library",
      });
    }
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
  // A drizzle session comes from drizzle-orm, so it is installed whenever this runs.
  const { sql } = requireDrizzle("a drizzle session");
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
