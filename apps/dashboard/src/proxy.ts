import { NextResponse, type NextRequest } from "next/server";
import { makeNonce, securityHeaders } from "../lib/security-headers.mjs";

/**
 * Every page gets its own script nonce (docs/dashboard.md#security-headers): set on the request's
 * Content-Security-Policy header, where Next.js reads it for the inline scripts it writes, and on the answer.
 * Assets and the API are left out: they carry the same headers without a nonce (bin/jfast-dashboard.mjs,
 * next.config.ts), so no inline script runs there.
 */
export function proxy(request: NextRequest): NextResponse {
  const headers = securityHeaders({ development: process.env.NODE_ENV === "development", nonce: makeNonce() });
  const forwarded = new Headers(request.headers);
  forwarded.set("content-security-policy", headers["Content-Security-Policy"]!);
  const response = NextResponse.next({ request: { headers: forwarded } });
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!_next/static|_next/image|api/|favicon\\.ico).*)" }],
};
