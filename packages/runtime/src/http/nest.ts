import { withRequest } from "../context/context.js";
import { contextFromNodeHeaders } from "./middleware.js";

/** The part of Nest's ExecutionContext the interceptor reads (typed here so the runtime does not depend on Nest). */
interface NestExecutionContext {
  getType(): string;
  switchToHttp(): { getRequest(): { headers?: Record<string, string | string[] | undefined> } | undefined };
}

/** Nest's CallHandler: `handle()` returns the Observable of the route handler's result. */
interface NestCallHandler<T> {
  handle(): T;
}

/** A global Nest interceptor: each HTTP route handler runs in its request's context (tenant, request id, trace). */
export interface JfastRequestContextInterceptor {
  intercept<T>(context: NestExecutionContext, next: NestCallHandler<T>): T;
}

/** What `jfast.middleware.nest()` returns: a Nest dynamic module, for `@Module({ imports: [...] })`. */
export interface JfastNestModule {
  module: abstract new () => object;
  global: true;
  providers: Array<{ provide: "APP_INTERCEPTOR"; useValue: JfastRequestContextInterceptor }>;
}

/** The module's class: Nest names a dynamic module by it. */
class JfastRequestContextModule {}

/**
 * Nest, on Express or on Fastify: `@Module({ imports: [jfast.middleware.nest()] })`. A global interceptor that
 * runs each route handler in the request's context, read from the same headers as the other frameworks'
 * middleware (`x-tenant-id`, `x-request-id`, `traceparent`, `tracestate`). It runs after guards and the body
 * parser and before pipes, and Nest carries the context it is given into the handler. Guards and Nest
 * middleware run before it: outside the context. docs/getting-started.md#your-web-framework
 */
export function nestContextModule(): JfastNestModule {
  const interceptor: JfastRequestContextInterceptor = {
    intercept(context, next) {
      if (context.getType() !== "http") return next.handle();
      const request = context.switchToHttp().getRequest();
      // Nest binds the handler to the async context in which handle() is called.
      return withRequest(contextFromNodeHeaders(request?.headers ?? {}), () => next.handle());
    },
  };
  return { module: JfastRequestContextModule, global: true, providers: [{ provide: "APP_INTERCEPTOR", useValue: interceptor }] };
}
