import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { withRequest } from "../context/context.js";

/**
 * Request context from headers: `x-tenant-id`, `x-request-id` (generated when absent), W3C `traceparent`
 * and `tracestate`. Services with their own tenant resolution call `withRequest` themselves.
 */
function contextFromHeaders(get: (name: string) => string | null | undefined) {
  return {
    tenantId: get("x-tenant-id") || null,
    requestId: get("x-request-id") || randomUUID(),
    traceparent: get("traceparent") || null,
    tracestate: get("tracestate") || null,
  };
}

/** Hono: `app.use(jfast.middleware.hono())`. Typed structurally so the runtime does not depend on Hono. */
export function honoContextMiddleware() {
  return (c: { req: { header(name: string): string | undefined } }, next: () => Promise<void>) =>
    withRequest(contextFromHeaders((name) => c.req.header(name)), next);
}

/** Express or node:http: `app.use(jfast.middleware.node())`. */
export function nodeContextMiddleware() {
  return (req: IncomingMessage, _res: ServerResponse, next: () => void) =>
    withRequest(
      contextFromHeaders((name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      }),
      next,
    );
}

/** Express / node:http middleware serving jfast's routes; passes everything else to `next`. */
export function nodeRoutes(fetch: (request: Request) => Promise<Response>) {
  return async (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/ready" && path !== "/queue/stats") {
      if (next) return next();
      res.statusCode = 404;
      res.end();
      return;
    }
    try {
      const response = await fetch(new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { method: req.method ?? "GET" }));
      res.statusCode = response.status;
      response.headers.forEach((value, key) => res.setHeader(key, value));
      res.end(await response.text());
    } catch (error) {
      if (next) next(error);
      else {
        res.statusCode = 500;
        res.end();
      }
    }
  };
}
