export type DashboardRole = "viewer" | "operator" | "admin";
export declare const ROLES: readonly DashboardRole[];
export interface ServiceConfig {
  name: string;
  url: string;
  token: string;
}
export interface DashboardUser {
  name: string;
  role: DashboardRole;
  passwordHash: string | null;
  /** Only for the single shared password of earlier versions (user "admin"). */
  password: string | null;
}
export interface ProxyAuthConfig {
  userHeader: string;
  emailHeader: string;
  trustedProxies: string[];
  secretHeader: string | null;
  secret: string | null;
  /** Person (e-mail or user header) to role. */
  roles: ReadonlyMap<string, DashboardRole>;
  defaultRole: DashboardRole | null;
}
export interface ResolvedDashboardConfig {
  services: ServiceConfig[];
  users: DashboardUser[];
  sharedPassword: boolean;
  proxyAuth: ProxyAuthConfig | null;
  secret: string;
  secretGenerated: boolean;
  listen: { host: string; port: number };
  /** Where the dashboard is served: "" for the root, "/ops" under a path (docs/dashboard.md#under-a-path). */
  basePath: string;
  sessionHours: number;
  traceUrl: string | null;
  notices: string[];
}
export declare class DashboardConfigError extends Error {
  code: "CONFIG_INVALID";
  hint: string;
}
/** What a config file holds (docs/dashboard.md#configuration); also the options of createDashboardHandler. */
export interface DashboardFileConfig {
  services?: ServiceConfig[];
  users?: Array<{ name: string; role: DashboardRole; passwordHash?: string | null }>;
  /** The single shared password of earlier versions (user "admin"). */
  password?: string;
  secret?: string;
  proxyAuth?: Record<string, unknown>;
  listen?: { host?: string; port?: number };
  /** Serve under this path ("/ops"): every page, asset, API route and cookie; "/" or absent for the root. */
  basePath?: string;
  sessionHours?: number;
  traceUrl?: string;
}
export declare function resolveConfig(params?: { flags?: Record<string, string | undefined>; env?: NodeJS.ProcessEnv; file?: DashboardFileConfig }): ResolvedDashboardConfig;
export declare function normaliseAddress(address: string): string;
