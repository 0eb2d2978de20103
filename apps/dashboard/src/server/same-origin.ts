/**
 * Whether a state-changing request comes from the dashboard's own pages. A browser says where a request comes
 * from in `Sec-Fetch-Site`, which no page can set: `same-origin` passes, `cross-site` and `same-site` do not.
 * Without it (an older browser) the `Origin` must name the host the request was sent to (`Host`, or
 * `X-Forwarded-Host` from a proxy in front). `Origin: null` is what a browser sends for a form under
 * `Referrer-Policy: no-referrer` (ours) and from a sandboxed frame: believed only with `Sec-Fetch-Site`. A request
 * with neither header is not a browser's (a script's, which carries no one else's cookie) and passes.
 */
export function crossOriginRefusal(request: Request): string | null {
  const site = request.headers.get("sec-fetch-site");
  if (site === "same-origin") return null;
  const refused = (from: string) => `a ${from} request was refused: sign in and act from the dashboard's own pages`;
  if (site === "cross-site" || site === "same-site") return refused(site);
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  let host: string;
  try {
    const parsed = new URL(origin);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not a web origin");
    host = parsed.host;
  } catch {
    return refused(`cross-origin (Origin: ${origin})`);
  }
  // Not request.url: Next.js builds it from its own idea of the host name (localhost), not from the request.
  const own = [request.headers.get("host"), ...(request.headers.get("x-forwarded-host") ?? "").split(",").map((h) => h.trim())];
  return own.includes(host) ? null : refused(`cross-origin (Origin: ${origin})`);
}
