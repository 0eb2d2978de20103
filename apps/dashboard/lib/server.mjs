// Starts the production build (Next.js standalone output, in dist/) inside this process and answers its request
// handler: the jfast-dashboard binary listens with it, and createDashboardHandler (lib/handler.mjs) hands it to
// a service's own server. One dashboard per process: the server code finds its configuration on globalThis.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { securityHeaders } from "./security-headers.mjs";

export const DIST = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), "dist");

export class MissingBuildError extends Error {
  constructor() {
    super(`no production build in ${DIST}\n  fix: npm run build -w @jfast/dashboard (in the jfast repository), or install the published package`);
    this.name = "MissingBuildError";
    this.code = "BUILD_MISSING";
  }
}

/**
 * @param {{ config: import("./config.d.mts").ResolvedDashboardConfig }} params
 * @returns {Promise<{ handle: (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void, owns: (pathname: string) => boolean }>}
 */
export async function startDashboardServer({ config }) {
  const manifest = path.join(DIST, "manifest.json");
  if (!existsSync(manifest)) throw new MissingBuildError();
  const appDir = path.join(DIST, JSON.parse(readFileSync(manifest, "utf8")).appDir);
  process.env.NODE_ENV ||= "production";
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  // The server code reads the configuration resolved here (src/server/config.ts), and trusts the peer address
  // header only with this process's random key, which no client can know (src/server/session.ts).
  const peerKey = randomBytes(18).toString("base64url");
  globalThis[Symbol.for("jfast.dashboard.config")] = config;
  globalThis[Symbol.for("jfast.dashboard.peerKey")] = peerKey;
  const nextConfig = JSON.parse(readFileSync(path.join(appDir, ".next", "required-server-files.json"), "utf8")).config;
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(nextConfig);
  const nextModule = createRequire(path.join(appDir, "server.js"))("next");
  const next = nextModule.default ?? nextModule;
  const { host, port } = config.listen;
  const app = next({ dev: false, dir: appDir, hostname: host, port, conf: nextConfig, customServer: true });
  await app.prepare();
  const handleNext = app.getRequestHandler();
  // Pages get a nonce-bearing policy from src/proxy.ts; these cover assets, the API and errors.
  const headers = Object.entries(securityHeaders());
  const routes = ownedRoutes(appDir);
  return {
    handle(req, res) {
      req.headers["x-jfast-peer"] = `${peerKey} ${req.socket.remoteAddress ?? "unknown"}`;
      for (const [name, value] of headers) res.setHeader(name, value);
      handleNext(req, res).catch((error) => {
        process.stderr.write(`jfast-dashboard: ${req.method} ${req.url} failed: ${error?.stack ?? error}\n`);
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
    },
    owns: (pathname) => routes.exact.has(pathname) || routes.prefixes.some((p) => pathname.startsWith(p)),
  };
}

/** The paths the build serves: its pages (from Next's route manifest), the API, the assets and the icon. */
function ownedRoutes(appDir) {
  const file = path.join(appDir, ".next", "app-path-routes-manifest.json");
  const pages = existsSync(file) ? Object.values(JSON.parse(readFileSync(file, "utf8"))) : [];
  const exact = new Set(["/favicon.ico"]);
  const prefixes = ["/_next/", "/api/"];
  for (const route of pages) {
    if (typeof route !== "string" || route.startsWith("/api/") || route.startsWith("/_")) continue;
    exact.add(route);
  }
  return { exact, prefixes };
}
