import type { TaskRegistry } from "../core/registry.js";
import type { JfastConfig } from "../config/load-config.js";
import type { RunningPlugins } from "../plugins/plugin.js";
import { createReadiness, minimalReport } from "./readiness.js";

/** Where the admin router is mounted; kept here so http/ does not load tRPC unless the admin API is built. */
export const ADMIN_PATH = "/jfast/admin";

/** GET /ready, GET /queue/stats, GET /metrics (SPEC §11) and the admin router under /jfast/admin (§12). Anything else is a 404 so the host framework can route it. */
export function createFetchHandler(params: {
  config: JfastConfig;
  registry: TaskRegistry;
  /** The started plugins: the queue, the outbox, Kafka and the scheduler each join /ready when running. */
  running: RunningPlugins;
  /** The admin tRPC router, served under /jfast/admin (any method: queries are GET, mutations POST). */
  admin?: (request: Request) => Promise<Response>;
  /** GET /metrics (Prometheus text format); closed in production unless [plugin.observability] expose_metrics. */
  metrics?: { render(): Promise<string>; contentType: string };
}): (request: Request) => Promise<Response> {
  const { config, registry } = params;
  const readiness = createReadiness(params);
  return async (request) => {
    const url = new URL(request.url);
    if (params.admin && (url.pathname === ADMIN_PATH || url.pathname.startsWith(`${ADMIN_PATH}/`))) return params.admin(request);
    if (request.method !== "GET" && request.method !== "HEAD") return notFound();
    if (url.pathname === "/ready") {
      const report = await readiness.check();
      return json(config.http.readyDetails ? report : minimalReport(report), report.status === "unavailable" ? 503 : 200);
    }
    if (url.pathname === "/queue/stats") {
      const open = config.service.environment !== "production" || config.queue?.exposeStats === true;
      if (!open) return notFound();
      const queue = params.running.get("queue")?.provider ?? null;
      if (!queue) return json({ error: "the queue plugin is not enabled or not started", docs: "jfast docs configuration" }, 404);
      try {
        const depths = await queue.depths();
        return json({
          service: config.service.name,
          backend: queue.backend.kind,
          queue: queue.name,
          // `delayed` names the same count as `scheduled` (delayed jobs and retries waiting out their backoff).
          depths: { ...depths, delayed: depths.scheduled },
          tasks: registry.names(),
        });
      } catch (error) {
        return json({ error: `the ${queue.backend.kind} queue cannot be reached: ${(error as Error).message}` }, 503);
      }
    }
    if (url.pathname === "/metrics" && params.metrics) {
      if (!config.metrics.open) return notFound();
      try {
        return new Response(await params.metrics.render(), { status: 200, headers: { "content-type": params.metrics.contentType } });
      } catch (error) {
        return json({ error: `metrics could not be collected: ${(error as Error).message}` }, 503);
      }
    }
    return notFound();
  };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

function notFound(): Response {
  return json({ error: "not found" }, 404);
}
