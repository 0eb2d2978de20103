// The headers every answer of the dashboard carries (docs/dashboard.md#security-headers). No page may be framed
// (Retry and Discard cannot be clickjacked), scripts and styles come from the dashboard itself, and nothing is
// fetched from anywhere else. Next.js writes its page data as inline scripts, hence 'unsafe-inline' for scripts;
// the development server also evaluates code ('unsafe-eval') and talks to its reload socket.
/** @param {{ development?: boolean }} [params] @returns {Record<string, string>} */
export function securityHeaders(params = {}) {
  const dev = params.development === true;
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    "Content-Security-Policy": csp,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
  };
}
