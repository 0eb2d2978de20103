/**
 * Whether a state-changing request comes from the dashboard's own pages. A browser names the page's origin in
 * `Origin` on every POST (and says `Sec-Fetch-Site`); another site's form or script cannot forge either. A request
 * without them is not a browser's (a script's, which has no cookie of someone else to ride on) and passes.
 * The origin's host must be the one the request was sent to: `Host`, or `X-Forwarded-Host` set by a proxy in front.
 */
export function crossOriginRefusal(request: Request): string | null {
  const site = request.headers.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") return `a ${site} request was refused: sign in and act from the dashboard's own pages`;
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  let host: string;
  try {
    const parsed = new URL(origin);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not a web origin");
    host = parsed.host;
  } catch {
    return `a request from origin "${origin}" was refused: sign in and act from the dashboard's own pages`;
  }
  // Not request.url: Next.js builds it from its own idea of the host name (localhost), not from the request.
  const own = [request.headers.get("host"), ...(request.headers.get("x-forwarded-host") ?? "").split(",").map((h) => h.trim())];
  return own.includes(host) ? null : `a request from ${origin} was refused: sign in and act from the dashboard's own pages`;
}
