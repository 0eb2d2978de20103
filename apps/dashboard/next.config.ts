import path from "node:path";
import { fileURLToPath } from "node:url";
import type { NextConfig } from "next";
import { PHASE_PRODUCTION_BUILD } from "next/constants";
import { BUILD_BASE_PATH, normaliseBasePath } from "./lib/base-path.mjs";
import { securityHeaders } from "./lib/security-headers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

// The production build is made under a placeholder base path that lib/server.mjs replaces with the one the
// dashboard is started with (--base-path, basePath), "" included; `next dev` reads JFAST_DASHBOARD_BASE_PATH.
const configFor = (phase: string): NextConfig => {
  const basePath = phase === PHASE_PRODUCTION_BUILD ? BUILD_BASE_PATH : (normaliseBasePath(process.env.JFAST_DASHBOARD_BASE_PATH) ?? "");
  return {
    basePath,
    // Read by src/base-path.ts, for the URLs Next.js does not prefix itself (forms, fetch, EventSource, cookies).
    env: { JFAST_BASE_PATH: basePath },
    // The dashboard is one Node process in front of the services; it never serves their tokens to the browser.
    poweredByHeader: false,
    reactStrictMode: true,
    // The package ships this self-contained server (bin/jfast-dashboard.mjs runs it): no next, react or build
    // tooling to install. Traced from the repository's root, where the workspace keeps node_modules.
    output: "standalone",
    outputFileTracingRoot: path.join(here, "..", ".."),
    // No image optimisation (it would need sharp, native code per platform); scripts/assemble.mjs leaves it out.
    images: { unoptimized: true },
    devIndicators: false,
    async headers() {
      // The binary sets these on every answer itself; this covers `next dev` and `next start`.
      const headers = securityHeaders({ development: process.env.NODE_ENV === "development" });
      return [{ source: "/:path*", headers: Object.entries(headers).map(([key, value]) => ({ key, value })) }];
    },
  };
};

export default configFor;
