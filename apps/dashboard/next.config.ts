import path from "node:path";
import { fileURLToPath } from "node:url";
import type { NextConfig } from "next";
import { securityHeaders } from "./lib/security-headers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

const config: NextConfig = {
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

export default config;
