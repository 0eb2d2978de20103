import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { getRequestListener } from "@hono/node-server";
import type { Logger } from "@jfast/runtime";
import { CliError } from "./errors.js";

export const WEB_FRAMEWORK_DOCS = "jfast docs getting-started#your-web-framework";

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;
/** `env` holds the Node request and response (`incoming`, `outgoing`), as @hono/node-server passes them. */
export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

/** What `createApp` returned, made servable on node:http: its listener, what it is, and how it shuts down. */
export interface WebApp {
  kind: "fetch" | "hono" | "node" | "express" | "koa" | "fastify" | "nest";
  listener: NodeListener;
  close(): Promise<void>;
}

/** The request id the server assigned (x-request-id, or a fresh one it wrote into the headers). */
export function requestIdOf(headers: IncomingMessage["headers"] | Record<string, unknown>): string | null {
  const value = headers["x-request-id"];
  return typeof value === "string" ? value : Array.isArray(value) && typeof value[0] === "string" ? value[0] : null;
}

interface Shapes {
  koa: { callback(): NodeListener; on(event: "error", listener: (error: unknown, ctx?: { req?: IncomingMessage }) => void): unknown };
  fastify: {
    routing: NodeListener;
    ready(): PromiseLike<unknown>;
    close(): PromiseLike<unknown>;
    addHook(name: "onError", hook: (request: { headers: Record<string, unknown>; method: string; url: string }, reply: unknown, error: unknown, done: () => void) => void): unknown;
  };
  nest: {
    init(): Promise<unknown>;
    close(): Promise<void>;
    getHttpAdapter(): { getInstance(): unknown };
    useGlobalInterceptors(...interceptors: unknown[]): unknown;
  };
  express: NodeListener & { use(handler: (error: unknown, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void): unknown; handle: unknown; set: unknown };
}

function has<K extends string>(value: unknown, ...keys: K[]): value is Record<K, (...args: never[]) => unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && keys.every((key) => typeof (value as Record<string, unknown>)[key] === "function");
}

/**
 * Recognises the app by shape, most specific first: a Nest application, a Fastify instance, a Koa app, an Express
 * app, an object with `fetch` (Hono), then a bare function — `(req, res)` (two or more parameters) is a Node
 * listener, anything else a fetch handler. Each framework keeps its own error response; jfast adds a log line
 * with the request id through the framework's own hook.
 */
export async function toWebApp(params: { app: unknown; file: string; logger: Logger }): Promise<WebApp> {
  const { app, logger } = params;
  const logFailure = (error: unknown, headers: Record<string, unknown>, where: { method?: string | undefined; url?: string | undefined }) => {
    if (clientError(error)) return;
    logger.error("request failed", { request_id: requestIdOf(headers), method: where.method, path: where.url?.split("?")[0], error: errorText(error) });
  };

  if (has(app, "getHttpAdapter", "init", "close", "useGlobalInterceptors")) {
    const nest = app as unknown as Shapes["nest"];
    nest.useGlobalInterceptors(nestFailureLogger(logFailure));
    await nest.init();
    const instance = nest.getHttpAdapter().getInstance();
    const inner = has(instance, "routing", "ready") ? ((await (instance as Shapes["fastify"]).ready(), (instance as Shapes["fastify"]).routing)) : typeof instance === "function" ? (instance as NodeListener) : null;
    if (!inner) throw unknownShape(params.file, "a Nest application on an HTTP adapter other than Express or Fastify");
    return { kind: "nest", listener: guarded(inner, logFailure), close: () => nest.close() };
  }
  if (has(app, "routing", "ready", "close", "addHook")) {
    const fastify = app as unknown as Shapes["fastify"];
    fastify.addHook("onError", (request, _reply, error, done) => {
      logFailure(error, request.headers, request);
      done();
    });
    await fastify.ready();
    return { kind: "fastify", listener: guarded(fastify.routing, logFailure), close: async () => void (await fastify.close()) };
  }
  if (has(app, "callback", "use", "on") && typeof app !== "function") {
    const koa = app as unknown as Shapes["koa"];
    // Koa logs to the console only when nobody listens to "error"; this listener logs with the request id instead.
    koa.on("error", (error, ctx) => logFailure(error, ctx?.req?.headers ?? {}, { method: ctx?.req?.method, url: ctx?.req?.url }));
    return { kind: "koa", listener: guarded(koa.callback(), logFailure), close: async () => {} };
  }
  if (typeof app === "function" && has(app, "use", "handle", "set")) {
    const express = app as unknown as Shapes["express"];
    // Last in the chain: an error nobody handled is logged, then passed on to Express's own final handler.
    express.use((error, req, _res, next) => {
      logFailure(error, req.headers, req);
      next(error);
    });
    return { kind: "express", listener: guarded(express, logFailure), close: async () => {} };
  }
  if (has(app, "fetch", "onError", "errorHandler")) {
    // Hono answers its own errors (errorHandler, read at each request); log first, then let it answer. An
    // HTTPException (getResponse) is an answer the app chose, not a failure.
    const hono = app as unknown as { errorHandler: (error: unknown, c: { req: { raw: Request } }) => unknown };
    const answer = hono.errorHandler;
    hono.errorHandler = (error, c) => {
      if (!has(error, "getResponse")) logFailure(error, { "x-request-id": c.req.raw.headers.get("x-request-id") }, { method: c.req.raw.method, url: new URL(c.req.raw.url).pathname });
      return answer.call(app, error, c);
    };
  }
  const fetch = typeof app === "function" && app.length < 2 ? (app as FetchHandler) : has(app, "fetch") ? (request: Request, env?: unknown) => (app as { fetch: FetchHandler }).fetch(request, env) : null;
  if (fetch) {
    const listener = getRequestListener(async (request, env) => {
      try {
        return await fetch(request, env);
      } catch (error) {
        logFailure(error, { "x-request-id": request.headers.get("x-request-id") }, { method: request.method, url: new URL(request.url).pathname });
        return new Response("Internal Server Error", { status: 500, headers: { "content-type": "text/plain; charset=utf-8" } });
      }
    });
    return { kind: has(app, "fetch", "onError", "errorHandler") ? "hono" : "fetch", listener, close: async () => {} };
  }
  if (typeof app === "function") return { kind: "node", listener: guarded(app as NodeListener, logFailure), close: async () => {} };
  throw unknownShape(params.file, app === null ? "null" : typeof app);
}

type LogFailure = (error: unknown, headers: Record<string, unknown>, where: { method?: string | undefined; url?: string | undefined }) => void;

/** Whatever escapes the framework itself (a plain handler throwing, a rejected promise) is logged and answered 500, or the socket closed if the answer had begun. */
function guarded(listener: NodeListener, logFailure: LogFailure): NodeListener {
  const fail = (error: unknown, req: IncomingMessage, res: ServerResponse) => {
    logFailure(error, req.headers, req);
    if (res.headersSent) res.destroy();
    else {
      res.statusCode = 500;
      res.setHeader("content-type", "text/plain; charset=utf-8");
      res.end("Internal Server Error");
    }
  };
  return (req, res) => {
    try {
      const result: unknown = (listener as (req: IncomingMessage, res: ServerResponse) => unknown)(req, res);
      if (result && typeof (result as PromiseLike<unknown>).then === "function") (result as Promise<unknown>).then(undefined, (error: unknown) => fail(error, req, res));
    } catch (error) {
      fail(error, req, res);
    }
  };
}

/**
 * A Nest interceptor written against the Observable's own constructor, so the CLI needs no rxjs: it logs an
 * error on its way to Nest's exception filter, which still answers as Nest does.
 */
interface ObservableLike {
  subscribe(observer: { next(value: unknown): void; error(error: unknown): void; complete(): void }): { unsubscribe(): void };
  constructor: new (subscribe: (subscriber: { next(value: unknown): void; error(error: unknown): void; complete(): void }) => () => void) => ObservableLike;
}

function nestFailureLogger(logFailure: LogFailure) {
  return {
    intercept(context: { switchToHttp(): { getRequest(): { headers?: Record<string, unknown>; method?: string; url?: string } } }, next: { handle(): ObservableLike }) {
      const source = next.handle();
      const request = context.switchToHttp().getRequest();
      return new source.constructor((subscriber) => {
        const subscription = source.subscribe({
          next: (value) => subscriber.next(value),
          error: (error) => {
            logFailure(error, request.headers ?? {}, request);
            subscriber.error(error);
          },
          complete: () => subscriber.complete(),
        });
        return () => subscription.unsubscribe();
      });
    },
  };
}

function unknownShape(file: string, got: string): CliError {
  return new CliError(`createApp() in ${path.basename(file)} returned ${got}, not an HTTP app jfast can serve`, {
    code: "ENTRY_INVALID",
    hint:
      "return one of: a fetch handler (request) => Response or an object with fetch (Hono); a Node (req, res) listener (Express, koa.callback(), node:http); " +
      "a Koa app; a Fastify instance; a Nest application from NestFactory.create (not yet listening)",
    docs: WEB_FRAMEWORK_DOCS,
  });
}

/**
 * An error that carries a 4xx status (a body parser's 400, `ctx.throw(404)`, Fastify's validation error, Nest's
 * NotFoundException) is the framework's answer to the client, not a failure of the service: not logged.
 */
function clientError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { status, statusCode, getStatus } = error as { status?: unknown; statusCode?: unknown; getStatus?: unknown };
  const code = typeof getStatus === "function" ? (getStatus as () => unknown).call(error) : (statusCode ?? status);
  return typeof code === "number" && code >= 400 && code < 500;
}

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
