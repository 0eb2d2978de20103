import { resolveConfig, type ResolvedDashboardConfig, type ServiceConfig } from "../../lib/config.mjs";

export type { ServiceConfig, DashboardRole, DashboardUser } from "../../lib/config.mjs";
export type DashboardConfig = ResolvedDashboardConfig;

/** Where the jfast-dashboard binary leaves the configuration it resolved (and checked) before starting the server. */
const RESOLVED = Symbol.for("jfast.dashboard.config");

/**
 * The configuration, resolved once per process: handed over by the binary, or read here from the environment
 * and JFAST_DASHBOARD_CONFIG when the server runs as `next dev` / `next start` (lib/config.mjs; docs/dashboard.md).
 */
export function dashboardConfig(): DashboardConfig {
  const holder = globalThis as { [RESOLVED]?: DashboardConfig };
  if (!holder[RESOLVED]) {
    const config = resolveConfig({ env: process.env });
    for (const notice of config.notices) console.warn(`[jfast-dashboard] ${notice}`);
    holder[RESOLVED] = config;
  }
  return holder[RESOLVED];
}

export function findService(name: string): ServiceConfig | undefined {
  return dashboardConfig().services.find((s) => s.name === name);
}
