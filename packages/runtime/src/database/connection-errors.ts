import { BackendError, JfastError } from "../errors/jfast-error.js";

const DOCS = "jfast docs postgres";

/** Where a connection goes, without the password, for messages. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const database = parsed.pathname.replace(/^\//, "") || "(default database)";
    return `${parsed.hostname}:${parsed.port || "5432"}/${database}${parsed.username ? ` as ${decodeURIComponent(parsed.username)}` : ""}`;
  } catch {
    return "the configured url";
  }
}

/**
 * SQLSTATE classes that mean "the server cannot be used right now", as opposed to "this statement is
 * wrong": 08 connection exception, 28 invalid authorization, 3D no such database, 53300 too many
 * connections, 57P01-57P03 shutdown / crash / cannot connect now.
 */
/**
 * The connection failure in an error or its causes (drizzle wraps the driver's error in a query error whose
 * `cause` is the driver's), or null when the error is about something else.
 */
function connectionCause(error: unknown): Error | null {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    if (isConnectionFailure(current)) return current as Error;
  }
  return null;
}

function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") {
    const message = (error as Error)?.message ?? "";
    return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(message);
  }
  if (/^E[A-Z]+$/.test(code)) return true; // Node socket errors: ECONNREFUSED, ENOTFOUND, ETIMEDOUT, ECONNRESET…
  return code.startsWith("08") || code.startsWith("28") || code === "3D000" || code === "53300" || /^57P0[123]$/.test(code);
}

/**
 * Translates a driver error at the database boundary. Connection failures become BackendError
 * (code DATABASE_UNAVAILABLE) with the fix in the hint; errors about a statement (syntax, constraint,
 * RLS) pass through unchanged, because callers branch on their SQLSTATE.
 */
export function translateConnectionError(error: unknown, url: string): unknown {
  if (error instanceof JfastError) return error;
  const failure = connectionCause(error);
  if (failure === null) return error;
  const code = (failure as { code?: string }).code;
  const where = describeUrl(url);
  const hint =
    code?.startsWith("28")
      ? "check the user and password in DATABASE_URL / [plugin.database] url"
      : code === "3D000"
        ? `create the database (createdb), or point DATABASE_URL / [plugin.database] url at an existing one`
        : code === "53300"
          ? "the server has no free connections: lower [plugin.database] pool_size or raise max_connections"
          : "is PostgreSQL running and reachable there? Check DATABASE_URL / [plugin.database] url, or remove the url to use the embedded database";
  return new BackendError(`cannot use PostgreSQL at ${where}: ${failure.message || code}`, {
    code: "DATABASE_UNAVAILABLE",
    hint,
    docs: DOCS,
    cause: error,
  });
}
