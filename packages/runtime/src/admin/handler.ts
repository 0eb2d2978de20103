import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { adminRouter } from "./root.js";
import type { AdminSources } from "./sources.js";
import { authenticate, type AdminToken } from "./tokens.js";
import { ADMIN_PATH } from "../http/fetch-handler.js";

export { ADMIN_PATH };

/** Serves the admin router over HTTP (tRPC's fetch adapter): queries as GET, mutations as POST. */
export function createAdminHandler(params: { sources: AdminSources; tokens: readonly AdminToken[] }) {
  const { sources, tokens } = params;
  return (request: Request): Promise<Response> =>
    fetchRequestHandler({
      endpoint: ADMIN_PATH,
      req: request,
      router: adminRouter,
      // One call per request: a batch of hundreds of calls in one GET or POST was one request's worth of
      // authentication and body limit for hundreds of scans or replays. Neither the dashboard nor the CLI batches.
      allowBatching: false,
      createContext: () => ({
        principal: authenticate(request.headers.get("authorization"), tokens),
        sources,
        tokensConfigured: tokens.length > 0,
      }),
      onError({ error, path }) {
        if (error.code === "INTERNAL_SERVER_ERROR") sources.logger.error("admin call failed", { path, error: error.cause ?? error });
      },
      responseMeta() {
        // Admin answers describe live state and carry job payloads: never cache them anywhere.
        return { headers: new Headers({ "cache-control": "no-store" }) };
      },
    });
}
