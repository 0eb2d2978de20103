import { headers } from "next/headers";
import { checkCredentials, createSession, peerAddress, SESSION_COOKIE } from "~/server/session";
import { lockedFor, recordFailure, recordSuccess } from "~/server/throttle";

export const dynamic = "force-dynamic";

/**
 * The sign-in form posts here. Right name and password: a new server-side session and its cookie. Wrong: back to
 * the form, counted against the client's address (src/server/throttle.ts) with a log line; while the address is
 * locked out, every attempt is refused unchecked (429 for scripts, the form says how long to wait).
 */
export async function POST(request: Request) {
  const form = await request.formData();
  const name = String(form.get("name") ?? "admin").trim() || "admin";
  const password = String(form.get("password") ?? "");
  const address = peerAddress(await headers()) ?? "unknown";
  const wait = lockedFor(address);
  if (wait > 0) {
    log({ msg: "dashboard sign-in refused: address locked out", address, user: name, retry_after_s: Math.ceil(wait / 1000) });
    return back(`/login?error=locked&wait=${Math.ceil(wait / 1000)}`, 429, Math.ceil(wait / 1000));
  }
  const person = await checkCredentials(name, password);
  if (!person) {
    const { failures, lockMs } = recordFailure(address);
    log({ msg: "dashboard sign-in failed", address, user: name, failures, locked_for_s: lockMs / 1000 });
    return lockMs > 0 ? back(`/login?error=locked&wait=${Math.ceil(lockMs / 1000)}`, 429, Math.ceil(lockMs / 1000)) : back("/login?error=1", 303);
  }
  recordSuccess(address);
  const session = createSession(person);
  const secure = new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto") === "https" ? "; Secure" : "";
  console.info(JSON.stringify({ level: "info", msg: "dashboard sign-in", address, user: person.name, role: person.role }));
  return new Response(null, {
    status: 303,
    headers: { location: "/", "set-cookie": `${SESSION_COOKIE}=${session.cookie}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${session.maxAge}${secure}` },
  });
}

function back(location: string, status: number, retryAfter?: number): Response {
  // A 429 still sends the browser back to the form (a page that says why), scripts read the status.
  const body = status === 429 ? `<!doctype html><meta http-equiv="refresh" content="0;url=${location}"><title>Too many attempts</title><p>Too many failed sign-ins from this address. <a href="${location}">Back</a></p>` : null;
  const headers: Record<string, string> = { location };
  if (retryAfter) headers["retry-after"] = String(retryAfter);
  if (body) headers["content-type"] = "text/html; charset=utf-8";
  return new Response(body, { status, headers });
}

function log(fields: Record<string, unknown>): void {
  console.warn(JSON.stringify({ level: "warn", ...fields }));
}
