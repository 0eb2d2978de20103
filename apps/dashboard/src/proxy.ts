import { NextResponse, type NextRequest } from "next/server";
import { makeNonce, securityHeaders } from "../lib/security-headers.mjs";
import { personFrom, SESSION_COOKIE } from "./server/session";

/** What anyone may reach: the sign-in page and its form's target, and signing out. Assets are not matched at all. */
const OPEN = new Set(["/login", "/api/login", "/api/logout"]);

/**
 * Runs before every request but assets (docs/security.md):
 * - Sign-in: a request without a live session (or the single sign-on proxy's trusted header) gets no further
 *   than here: pages, their client-side navigations and prefetches (`RSC: 1`) are sent to /login, the API and
 *   the live stream answer 401. The console layout checks again, as does every page that fetches data.
 * - Every page gets its own script nonce (docs/dashboard.md#security-headers): set on the request's
 *   Content-Security-Policy header, where Next.js reads it for the inline scripts it writes, and on the answer.
 *   API answers carry the same headers without a nonce (bin/jfast-dashboard.mjs, next.config.ts).
 */
export function proxy(request: NextRequest): NextResponse {
  const development = process.env.NODE_ENV === "development";
  const path = request.nextUrl.pathname;
  const api = path.startsWith("/api/");
  if (!OPEN.has(path) && !personFrom(request.headers, request.cookies.get(SESSION_COOKIE)?.value)) {
    const refusal = api
      ? NextResponse.json({ error: { message: "log in to the dashboard first", code: -32001, data: { code: "UNAUTHORIZED", httpStatus: 401 } } }, { status: 401 })
      : NextResponse.redirect(loginUrl(request), 307);
    for (const [name, value] of Object.entries(securityHeaders({ development }))) refusal.headers.set(name, value);
    refusal.headers.set("cache-control", "no-store");
    return refusal;
  }
  if (api) return NextResponse.next();
  const headers = securityHeaders({ development, nonce: makeNonce() });
  const forwarded = new Headers(request.headers);
  forwarded.set("content-security-policy", headers["Content-Security-Policy"]!);
  const response = NextResponse.next({ request: { headers: forwarded } });
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/** The sign-in page under the dashboard's base path (nextUrl carries it; request.url's path alone would lose it). */
function loginUrl(request: NextRequest): URL {
  const url = request.nextUrl.clone();
  url.pathname = "/login";
  url.search = "";
  return url;
}

export const config = {
  // Not the assets, and not /api/login: its body is read (and bounded) by the route alone.
  // "/" as well: under a base path the first pattern needs the slash after it ("/ops/"), and "/ops" is the Overview.
  matcher: [{ source: "/" }, { source: "/((?!_next/static|_next/image|favicon\\.ico|api/login$).*)" }],
};
