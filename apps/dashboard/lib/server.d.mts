import type { IncomingMessage, ServerResponse } from "node:http";
import type { ResolvedDashboardConfig } from "./config.d.mts";
export declare const DIST: string;
export declare class MissingBuildError extends Error {
  code: "BUILD_MISSING";
}
export declare function startDashboardServer(params: { config: ResolvedDashboardConfig }): Promise<{
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  owns: (pathname: string) => boolean;
}>;
