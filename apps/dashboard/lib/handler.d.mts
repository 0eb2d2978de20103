import type { IncomingMessage, ServerResponse } from "node:http";
import type { DashboardFileConfig } from "./config.d.mts";

export { DashboardConfigError } from "./config.d.mts";

export interface DashboardHandlerOptions extends Omit<DashboardFileConfig, "listen"> {
  /**
   * Serve under this path ("/ops", "/admin/jobs"): every page, asset, API route, the live stream and the
   * session cookie stay below it, and nothing outside it is answered. "/" or absent: the root
   * (docs/dashboard.md#under-a-path).
   */
  basePath?: string;
}

/**
 * node:http's (req, res), or Express/Connect's (req, res, next): then paths that are not the dashboard's go on.
 * Mounted with `app.use("/ops", handler)` it reads the whole URL from `req.originalUrl`.
 */
export interface DashboardHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** The base path it serves under: "" for the root, else "/ops". */
  readonly basePath: string;
  /** Whether a request URL (path and query) is the dashboard's: for hooks that must decide before handing over (Fastify, Koa, Hono). */
  owns(url: string): boolean;
}

export declare function createDashboardHandler(options?: DashboardHandlerOptions): Promise<DashboardHandler>;
