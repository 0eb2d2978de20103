import type { IncomingMessage, ServerResponse } from "node:http";
import type { DashboardFileConfig } from "./config.d.mts";

export { DashboardConfigError } from "./config.d.mts";

export interface DashboardHandlerOptions extends Omit<DashboardFileConfig, "listen"> {
  /** Only "/" (or absent): the published build serves from the root (docs/dashboard.md#mounting-in-a-node-server). */
  basePath?: string;
}

/** node:http's (req, res), or Express/Connect's (req, res, next): then paths that are not the dashboard's go on. */
export type DashboardHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export declare function createDashboardHandler(options?: DashboardHandlerOptions): Promise<DashboardHandler>;
