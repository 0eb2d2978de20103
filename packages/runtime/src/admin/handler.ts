import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { adminRouter } from "./root.js";
import type { AdminSources } from "./sources.js";
import { ScanRateLimited } from "./scan-limit.js";
import { bodyTooLarge, readBodyWithin } from "./body-limit.js";
import { ACTOR_HEADER, authenticate, presentedToken, type AdminToken } from "./tokens.js";
import { ADMIN_PATH } from "../http/fetch-handler.js";
import type { Keyring } from "../core/crypto/keyring.js";
import { mayReadEncrypted, sealedRedaction } from "./sealed-redaction.js";

export { ADMIN_PATH };

/** Serves the admin router over HTTP (tRPC's fetch adapter): queries as GET, mutations as POST. */
export function createAdminHandler(params: { sources: AdminSources; tokens: readonly AdminToken[]; maxBodyBytes: number; keyring?: Keyring | null }) {
  const { sources, tokens, maxBodyBytes } = params;
  // Encrypted payloads and errors: opened for those who may read them, shown as encrypted to the others.
  const readable: AdminSources = { ...sources, redaction: sealedRedaction(sources.redaction, params.keyring ?? null, true) };
  const sealed: AdminSources = { ...sources, redaction: sealedRedaction(sources.redaction, params.keyring ?? null, false) };
  return async (received: Request): Promise<Response> => {
    let request = received;
    if (received.body) {
      const body = await readBodyWithin(received, maxBodyBytes);
      if (!body) {
        sources.logger.warn("admin call refused: body too large", { path: new URL(received.url).pathname, limit_bytes: maxBodyBytes });
        return bodyTooLarge(maxBodyBytes);
      }
      request = new Request(received.url, { method: received.method, headers: received.headers, body });
    }
    return fetchRequestHandler({
      endpoint: ADMIN_PATH,
      req: request,
      router: adminRouter,
      // One call per request: a batch of hundreds of calls in one GET or POST was one request's worth of
      // authentication and body limit for hundreds of scans or replays. Neither the dashboard nor the CLI batches.
      allowBatching: false,
      createContext: () => {
        const authorization = request.headers.get("authorization");
        const principal = authenticate(authorization, tokens, request.headers.get(ACTOR_HEADER));
        return {
          principal,
          presented: presentedToken(authorization),
          sources: mayReadEncrypted(principal) ? readable : sealed,
          tokensConfigured: tokens.length > 0,
        };
      },
      onError({ error, path }) {
        if (error.code === "INTERNAL_SERVER_ERROR") sources.logger.error("admin call failed", { path, error: error.cause ?? error });
      },
      responseMeta({ errors }) {
        // Admin answers describe live state and carry job payloads: never cache them anywhere.
        const headers = new Headers({ "cache-control": "no-store" });
        const limited = errors.map((e) => e.cause).find((c): c is ScanRateLimited => c instanceof ScanRateLimited);
        if (limited) headers.set("retry-after", String(limited.retryAfterSeconds));
        return { headers };
      },
    });
  };
}
