import { BackendError, JfastError } from "../../errors/jfast-error.js";

export const DOCS = "jfast docs postgres";

export function translate(error: unknown, operation: string, schema: string): JfastError {
  if (error instanceof JfastError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = (error as Error)?.message ?? String(error);
  if (code === "42P01" || code === "42883") {
    return new BackendError(`postgres queue: ${operation} failed: ${message}`, {
      code: "SCHEMA_MISSING",
      hint: `the queue's tables or functions are missing in schema "${schema}"; start the app (it migrates) before using the queue`,
      docs: `${DOCS}#migrations`,
      cause: error,
    });
  }
  if (code === "22P05") {
    return new BackendError(`postgres queue: ${operation} failed: ${message}`, {
      code: "PAYLOAD_UNSUPPORTED",
      hint: "PostgreSQL JSON cannot store the NUL character (\\u0000): strip it from the payload, or encode binary data (base64)",
      docs: DOCS,
      cause: error,
    });
  }
  return new BackendError(`postgres queue: ${operation} failed: ${message}`, {
    code: "BACKEND_QUERY_FAILED",
    hint: "see the cause; if the database was unreachable, the job is not lost: a lease brings claimed work back",
    docs: DOCS,
    cause: error,
  });
}

/**
 * A failure of one row rather than of the database: a data exception (class 22: a value the statement cannot
 * read or write), an integrity violation (class 23) or an exception raised by a trigger (P0001).
 */
export function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23") || code === "P0001");
}
