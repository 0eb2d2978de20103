// @jfast/dashboard as a request handler a Node server mounts: `(req, res, next?) => void` for node:http, Express,
// Connect, Koa, Fastify, Hono on Node and Nest, at the root or under a path. docs/dashboard.md#mounting-in-a-node-server
import { DashboardConfigError, resolveConfig } from "./config.mjs";
import { startDashboardServer } from "./server.mjs";

const DOCS = "jfast docs dashboard#mounting-in-a-node-server";

/**
 * Starts the dashboard's production build in this process. The options are what the config file holds
 * (services, users, secret, proxyAuth, sessionHours, traceUrl, basePath); JFAST_DASHBOARD_* variables are not read.
 * Under a base path ("/ops") it answers that path and everything below it, and nothing else; at the root, its own
 * pages, /api/*, /_next/* and the icon. Called with `next` (Express, Connect), other paths go on to the next handler.
 * @param {import("./handler.d.mts").DashboardHandlerOptions} [options]
 * @returns {Promise<import("./handler.d.mts").DashboardHandler>}
 */
export async function createDashboardHandler(options = {}) {
  const config = resolveConfig({ env: { NODE_ENV: process.env.NODE_ENV }, file: options });
  for (const notice of config.notices) process.stderr.write(`jfast-dashboard: ${notice}\n`);
  const server = await startDashboardServer({ config });
  const { basePath } = config;
  /** The path the browser asked for: Express, Connect and middie keep it in originalUrl when a mount strips req.url. */
  const fullUrl = (req) => (typeof req.originalUrl === "string" ? req.originalUrl : (req.url ?? "/"));
  const owns = (url) => server.owns(String(url).split("?")[0]);
  function dashboardHandler(req, res, next) {
    const mount = typeof req.baseUrl === "string" ? req.baseUrl : "";
    if (mount && mount !== basePath) {
      const error = new DashboardConfigError(
        `the dashboard was mounted under "${mount}" but its basePath is "${basePath || "/"}"`,
        `createDashboardHandler({ basePath: "${mount}" }) for app.use("${mount}", handler), or mount it at the path its basePath names; ${DOCS}`,
      );
      if (typeof next === "function") return next(error);
      res.statusCode = 500;
      res.end(error.message);
      return;
    }
    const url = fullUrl(req);
    if (typeof next === "function" && !owns(url)) return next();
    // Next.js reads the base path from the URL it is given: the whole one, not what a mount left of it.
    req.url = url;
    // Koa sets 404 on the response before its middleware runs; the static files leave the status as they find it.
    if (!res.headersSent) res.statusCode = 200;
    server.handle(req, res);
  }
  return Object.assign(dashboardHandler, { basePath, owns });
}

export { DashboardConfigError };
