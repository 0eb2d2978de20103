// @jfast/dashboard as a request handler a Node server mounts: `(req, res, next?) => void` for node:http, Express,
// Connect or Fastify's middie. docs/dashboard.md#mounting-in-a-node-server
import { DashboardConfigError, resolveConfig } from "./config.mjs";
import { startDashboardServer } from "./server.mjs";

const DOCS = "jfast docs dashboard#mounting-in-a-node-server";

/**
 * Starts the dashboard's production build in this process. The options are what the config file holds
 * (services, users, secret, proxyAuth, sessionHours, traceUrl); JFAST_DASHBOARD_* variables are not read.
 * Called with `next` (Express, Connect), requests for paths that are not the dashboard's go on to the next
 * handler. It serves from the root of the host's URL space: Next.js writes the base path into the built
 * scripts, so the prebuilt package cannot move under another path.
 * @param {import("./handler.d.mts").DashboardHandlerOptions} [options]
 */
export async function createDashboardHandler(options = {}) {
  const { basePath, ...file } = options;
  if (basePath !== undefined && basePath !== "" && basePath !== "/") {
    throw new DashboardConfigError(
      `the dashboard cannot be mounted under "${basePath}": Next.js builds its base path into the page scripts and links, and the published build serves from "/"`,
      `mount the handler at the root of a server (its own port, or before the service's routes: it passes on paths that are not its own), or put the jfast-dashboard binary behind a proxy on a host name of its own; ${DOCS}`,
    );
  }
  const config = resolveConfig({ env: { NODE_ENV: process.env.NODE_ENV }, file });
  for (const notice of config.notices) process.stderr.write(`jfast-dashboard: ${notice}\n`);
  const server = await startDashboardServer({ config });
  return function dashboardHandler(req, res, next) {
    // Express strips a mount path from req.url: links in the pages would then leave the mount and break.
    if (req.baseUrl) {
      const error = new DashboardConfigError(`the dashboard was mounted under "${req.baseUrl}"; it serves only from "/"`, `app.use(handler) instead of app.use("${req.baseUrl}", handler); ${DOCS}`);
      if (typeof next === "function") return next(error);
      res.statusCode = 500;
      res.end(error.message);
      return;
    }
    const pathname = (req.url ?? "/").split("?")[0];
    if (typeof next === "function" && !server.owns(pathname)) return next();
    server.handle(req, res);
  };
}

export { DashboardConfigError };
