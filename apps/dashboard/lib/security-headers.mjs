// The headers every answer of the dashboard carries (docs/dashboard.md#security-headers). No page may be framed
// (Retry and Discard cannot be clickjacked), scripts and styles come from the dashboard itself, and nothing is
// fetched from anywhere else. Inline scripts run only with the page's nonce: Next.js writes its page data as
// inline scripts and puts on each the nonce it reads from the request's Content-Security-Policy header, which
// src/proxy.ts sets with a fresh nonce per page. Answers without a nonce (assets, API) allow no inline script.
// The development server also evaluates code ('unsafe-eval') and talks to its reload socket. Style attributes
// stay allowed ('unsafe-inline' in style-src): React writes them, and they cannot run code.
/** @param {{ development?: boolean, nonce?: string }} [params] @returns {Record<string, string>} */
export function securityHeaders(params = {}) {
  const dev = params.development === true;
  const csp = [
    "default-src 'self'",
    `script-src 'self'${params.nonce ? ` 'nonce-${params.nonce}'` : ""}${dev ? " 'unsafe-eval'" : ""}`,
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

/** A fresh nonce for one page: 16 random bytes, base64 (the form CSP's nonce-source takes). */
export function makeNonce() {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}
