/**
 * Where the dashboard is mounted: "" at the root, "/ops" under a path (docs/dashboard.md#links-in-pages).
 * Next.js adds it by itself to <Link href>, router.push and redirect(); every other URL a page or route writes by
 * hand — a form's action, fetch, EventSource, a Location header, a cookie's Path — goes through withBase().
 */
export const BASE_PATH: string = process.env.JFAST_BASE_PATH ?? "";

/** An absolute path of the dashboard ("/api/logout") as the browser must ask for it ("/ops/api/logout"). */
export function withBase(path: string): string {
  return `${BASE_PATH}${path}`;
}

/** The Path of the dashboard's cookies: they are sent only to the dashboard, never to the host's other routes. */
export const COOKIE_PATH: string = BASE_PATH || "/";
