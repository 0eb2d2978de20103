// Starts the production build (Next.js standalone output, in dist/) inside this process and answers its request
// handler: the jfast-dashboard binary listens with it, and createDashboardHandler (lib/handler.mjs) hands it to
// a service's own server. One dashboard per process: the server code finds its configuration on globalThis.
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BUILD_BASE_PATH } from "./base-path.mjs";
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
  const builtAppDir = path.join(DIST, JSON.parse(readFileSync(manifest, "utf8")).appDir);
  const basePath = config.basePath ?? "";
  const appDir = buildUnder(builtAppDir, basePath);
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
  const routes = basePath ? null : ownedRoutes(appDir);
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
    owns: (pathname) =>
      routes ? routes.exact.has(pathname) || routes.prefixes.some((p) => pathname.startsWith(p)) : pathname === basePath || pathname.startsWith(`${basePath}/`),
  };
}

/**
 * The build is made under a placeholder base path (lib/base-path.mjs): Next.js writes it into the page scripts,
 * the route manifests and the server code. Here a copy of the app folder gets the real one ("" for the root), made
 * once per build and base path in JFAST_DASHBOARD_CACHE_DIR (default: the system's temporary folder) and kept for
 * the next start; its node_modules is a link to the package's own.
 */
function buildUnder(builtAppDir, basePath) {
  const buildId = readFileSync(path.join(builtAppDir, ".next", "BUILD_ID"), "utf8").trim();
  const key = createHash("sha256").update(`${builtAppDir}\0${buildId}\0${basePath}`).digest("hex").slice(0, 16);
  const root = path.join(process.env.JFAST_DASHBOARD_CACHE_DIR || path.join(tmpdir(), "jfast-dashboard"), `${buildId}-${key}`);
  const appDir = path.join(root, "app");
  if (existsSync(path.join(root, "ready"))) return appDir;
  mkdirSync(path.dirname(root), { recursive: true });
  const staging = `${root}.${process.pid}.${randomBytes(4).toString("hex")}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  // The standalone server's node_modules sits two folders above the app folder (standalone/apps/dashboard).
  symlinkSync(path.resolve(builtAppDir, "..", "..", "node_modules"), path.join(staging, "node_modules"), "dir");
  copyRewriting(builtAppDir, path.join(staging, "app"), basePath);
  writeFileSync(path.join(staging, "ready"), `${basePath || "/"}\n`);
  try {
    renameSync(staging, root);
  } catch (error) {
    // Another process made the same copy first: use theirs.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(path.join(root, "ready"))) throw error;
  }
  return appDir;
}

const PLACEHOLDER = new RegExp(`(\\\\*/)${BUILD_BASE_PATH.slice(1)}`, "g");
const TEXT = /\.(js|cjs|mjs|json|html|rsc|meta|body|txt|map|css|segment)$/;

/** Copies a folder, writing the base path over the placeholder in text files (a "/" escaped in a regex stays escaped). */
function copyRewriting(from, to, basePath) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from)) {
    const source = path.join(from, entry);
    const target = path.join(to, entry);
    const stat = lstatSync(source);
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (stat.isDirectory()) copyRewriting(source, target, basePath);
    else if (TEXT.test(entry) || !entry.includes(".")) {
      const text = readFileSync(source, "utf8");
      if (!text.includes(BUILD_BASE_PATH.slice(1))) copyFileSync(source, target);
      else writeFileSync(target, text.replace(PLACEHOLDER, (_, slash) => basePath.replaceAll("/", slash)));
    } else copyFileSync(source, target);
  }
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
