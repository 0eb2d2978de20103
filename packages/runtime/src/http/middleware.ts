import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { withRequest } from "../context/context.js";
import { ADMIN_PATH } from "./fetch-handler.js";

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

/** Node's header record (IncomingMessage, Fastify's request): a repeated header counts by its first value. */
export function contextFromNodeHeaders(headers: Record<string, string | string[] | undefined>) {
  return contextFromHeaders((name) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  });
}

/** Express (and Nest on Express) or node:http: `app.use(jfast.middleware.express())`. */
export function nodeContextMiddleware() {
  return (req: IncomingMessage, _res: ServerResponse, next: () => void) => withRequest(contextFromNodeHeaders(req.headers), next);
}

/** Koa: `app.use(jfast.middleware.koa())`; everything awaited after it runs in the request's context. */
export function koaContextMiddleware() {
  return (ctx: { get(name: string): string }, next: () => Promise<unknown>) => withRequest(contextFromHeaders((name) => ctx.get(name)), next);
}

/**
 * Fastify: `app.addHook("preHandler", jfast.middleware.fastify())`. A callback hook, not an async one: Fastify
 * calls the handler from inside `done`, so the context reaches it. preHandler runs after the body is parsed.
 */
export function fastifyContextHook() {
  return (request: { headers: Record<string, string | string[] | undefined> }, _reply: unknown, done: () => void): void =>
    withRequest(contextFromNodeHeaders(request.headers), done);
}

/** Express / node:http middleware serving jfast's routes; passes everything else to `next`. */
export function nodeRoutes(fetch: (request: Request) => Promise<Response>) {
  return async (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const admin = path === ADMIN_PATH || path.startsWith(`${ADMIN_PATH}/`);
    if (path !== "/ready" && path !== "/queue/stats" && !admin) {
      if (next) return next();
      res.statusCode = 404;
      res.end();
      return;
    }
    try {
      const response = await fetch(admin ? toAdminRequest(req) : new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { method: req.method ?? "GET" }));
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

/** Admin calls carry the bearer token and, for mutations, a JSON body: forward both. */
function toAdminRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(", "));
  }
  const method = req.method ?? "GET";
  // Streamed, not buffered here: the admin handler reads it up to its size limit and stops.
  const body = method !== "GET" && method !== "HEAD" ? bodyStream(req) : undefined;
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { method, headers, ...(body ? { body, duplex: "half" } : {}) } as RequestInit);
}

/**
 * The request body as a Web stream that reads from the socket only when pulled. Cancelled (a body past the
 * admin API's limit), it stops taking chunks; Node discards the rest once the answer is sent.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.pause();
      req.on("data", (chunk: Buffer) => {
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once("end", () => {
        if (!finished) controller.close();
        finished = true;
      });
      req.once("error", (error) => {
        if (!finished) controller.error(error);
        finished = true;
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      finished = true;
      req.pause();
    },
  });
}
