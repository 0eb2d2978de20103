import { headers } from "next/headers";
import { BASE_PATH, COOKIE_PATH, withBase } from "~/base-path";
import { readSmallForm, LOGIN_BODY_LIMIT } from "~/server/bounded-body";
import { crossOriginRefusal } from "~/server/same-origin";
import { checkCredentials, createSession, peerAddress, SESSION_COOKIE } from "~/server/session";
import { attempt } from "~/server/throttle";

export const dynamic = "force-dynamic";

/**
 * The sign-in form posts here. Refused before anything is read: a POST from another site's page (403) and a body
 * over 8 KB (413). Then the attempt is counted against the client's address and the name (src/server/throttle.ts),
 * one check at a time per address. Right name and password: a new server-side session and its cookie. Wrong: back
 * to the form, with a log line; while the address or the name is locked out, every attempt is refused unchecked
 * (429 for scripts, the form says how long to wait). docs/security.md
 */
export async function POST(request: Request) {
  const address = peerAddress(await headers()) ?? "unknown";
  const crossOrigin = crossOriginRefusal(request);
  if (crossOrigin) {
    log({ msg: "dashboard sign-in refused: cross-origin", address, origin: request.headers.get("origin") });
    return new Response(`${crossOrigin} (jfast docs security)`, { status: 403, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  const form = await readSmallForm(request);
  if (!form) {
    log({ msg: "dashboard sign-in refused: body too large", address, limit_bytes: LOGIN_BODY_LIMIT });
    return new Response(`a sign-in form is at most ${LOGIN_BODY_LIMIT} bytes (jfast docs security)`, { status: 413, headers: { "content-type": "text/plain; charset=utf-8", connection: "close" } });
  }
  const name = String(form.get("name") ?? "admin").trim() || "admin";
  const password = String(form.get("password") ?? "");
  const result = await attempt({
    address,
    account: name,
    check: async () => {
      const person = await checkCredentials(name, password);
      return { ok: person !== null, value: person };
    },
  });
  if (result.outcome === "locked") {
    const wait = Math.ceil(result.waitMs / 1000);
    log({ msg: "dashboard sign-in refused: address locked out", address, user: name, retry_after_s: wait });
    return back(withBase(`/login?error=locked&wait=${wait}`), 429, wait);
  }
  const person = result.value;
  if (!person) {
    const { failures, lockMs } = result;
    log({ msg: "dashboard sign-in failed", address, user: name, failures, locked_for_s: lockMs / 1000 });
    return lockMs > 0 ? back(withBase(`/login?error=locked&wait=${Math.ceil(lockMs / 1000)}`), 429, Math.ceil(lockMs / 1000)) : back(withBase("/login?error=1"), 303);
  }
  const session = createSession(person);
  const secure = new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto") === "https" ? "; Secure" : "";
  console.info(JSON.stringify({ level: "info", msg: "dashboard sign-in", address, user: person.name, role: person.role }));
  return new Response(null, {
    status: 303,
    headers: { location: BASE_PATH || "/", "set-cookie": `${SESSION_COOKIE}=${session.cookie}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=${session.maxAge}${secure}` },
  });
}

function back(location: string, status: number, retryAfter?: number): Response {
  // A 429 still sends the browser back to the form (a page that says why), scripts read the status.
  const body = status === 429 ? `<!doctype html><meta http-equiv="refresh" content="0;url=${location}"><title>Too many attempts</title><p>Too many failed sign-ins from this address or for this name. <a href="${location}">Back</a></p>` : null;
  const headers: Record<string, string> = { location };
  if (retryAfter) headers["retry-after"] = String(retryAfter);
  if (body) headers["content-type"] = "text/html; charset=utf-8";
  return new Response(body, { status, headers });
}

function log(fields: Record<string, unknown>): void {
  console.warn(JSON.stringify({ level: "warn", ...fields }));
}
