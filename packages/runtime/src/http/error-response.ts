import { JfastError } from "../errors/jfast-error.js";

/** What a client sees when a request failed on a JfastError: the fix travels with the failure. */
export interface JfastErrorBody {
  error: string;
  code: string;
  fix: string | null;
  docs: string | null;
}

/**
 * The status and body for an error jfast raised on purpose (UndeliverableEvent, a provider that is not
 * enabled...), or null for anything else, which the host framework handles as it always does. Always 500:
 * these are the service's mistakes, not the client's, and the body says how to fix them.
 */
export function jfastErrorBody(error: unknown): { status: 500; body: JfastErrorBody } | null {
  if (!isJfastError(error)) return null;
  // JfastError appends "fix:" and "see:" lines to its message; the body carries them as fields instead.
  const firstLine = error.message.split(/\n {2}(?:fix|see): /)[0]!;
  return { status: 500, body: { error: firstLine, code: error.code, fix: error.hint ?? null, docs: error.docs ?? null } };
}

/**
 * A Web Response for a JfastError, or null. Hono: `app.onError((e, c) => jfastErrorResponse(e) ?? c.text("internal error", 500))`.
 * Express: use `jfastErrorBody` in an error middleware.
 */
export function jfastErrorResponse(error: unknown): Response | null {
  const found = jfastErrorBody(error);
  if (!found) return null;
  return new Response(JSON.stringify(found.body), { status: found.status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/** By class, or by shape when another copy of the runtime raised it. */
function isJfastError(error: unknown): error is JfastError {
  if (error instanceof JfastError) return true;
  return error instanceof Error && typeof (error as { code?: unknown }).code === "string" && "hint" in error && "docs" in error;
}
