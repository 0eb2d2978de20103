import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** One service the dashboard watches: its admin API (`<url>/jfast/admin`) and the bearer token it sends there. */
export interface ServiceConfig {
  name: string;
  url: string;
  token: string;
}

export interface DashboardConfig {
  services: ServiceConfig[];
  /** The dashboard's own login password; null means nobody can log in until one is set. */
  password: string | null;
  /** Signs session cookies. */
  secret: string;
  /** A link to a trace in the tracing UI, with `{traceId}` where the id goes; null shows the id without a link. */
  traceUrl: string | null;
}

let cached: DashboardConfig | null = null;

/**
 * Reads the dashboard's configuration once: services from JFAST_DASHBOARD_SERVICES (a JSON array) or from the
 * JSON file named by JFAST_DASHBOARD_CONFIG (`{ "services": [...], "password": "..." }`); the password from
 * JFAST_DASHBOARD_PASSWORD (or the file); the cookie secret from JFAST_DASHBOARD_SECRET, else derived from it.
 */
export function dashboardConfig(): DashboardConfig {
  if (cached) return cached;
  let file: { services?: unknown; password?: unknown } = {};
  const path = process.env.JFAST_DASHBOARD_CONFIG;
  if (path) {
    try {
      file = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new Error(`JFAST_DASHBOARD_CONFIG=${path} is not a readable JSON file: ${(error as Error).message}`);
    }
  }
  let services: unknown = file.services ?? [];
  if (process.env.JFAST_DASHBOARD_SERVICES) {
    try {
      services = JSON.parse(process.env.JFAST_DASHBOARD_SERVICES);
    } catch (error) {
      throw new Error(`JFAST_DASHBOARD_SERVICES is not JSON: ${(error as Error).message}. Expected [{"name":"billing","url":"http://127.0.0.1:8000","token":"..."}]`);
    }
  }
  const password = process.env.JFAST_DASHBOARD_PASSWORD || (typeof file.password === "string" ? file.password : null);
  cached = {
    services: validateServices(services),
    password,
    secret: process.env.JFAST_DASHBOARD_SECRET || createHash("sha256").update(`jfast-dashboard:${password ?? ""}`).digest("hex"),
    traceUrl: validateTraceUrl(process.env.JFAST_DASHBOARD_TRACE_URL),
  };
  return cached;
}

function validateTraceUrl(value: string | undefined): string | null {
  if (!value) return null;
  if (!/^https?:\/\//.test(value) || !value.includes("{traceId}")) {
    throw new Error(`JFAST_DASHBOARD_TRACE_URL must be an http(s) URL with {traceId} where the id goes, e.g. http://127.0.0.1:16686/trace/{traceId} (jfast docs dashboard)`);
  }
  return value;
}

function validateServices(value: unknown): ServiceConfig[] {
  if (!Array.isArray(value)) throw new Error("the dashboard's services must be a JSON array of { name, url, token }");
  const seen = new Set<string>();
  return value.map((entry, index) => {
    const { name, url, token } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !/^[a-z0-9][a-z0-9_-]*$/i.test(name)) throw new Error(`service #${index + 1}: "name" must be a short identifier such as "billing"`);
    if (seen.has(name)) throw new Error(`service "${name}" is listed twice`);
    seen.add(name);
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw new Error(`service "${name}": "url" must be the service's base URL, e.g. http://127.0.0.1:8000`);
    if (typeof token !== "string" || token.length === 0) throw new Error(`service "${name}": "token" is the admin bearer token (viewer or operator)`);
    return { name, url: url.replace(/\/+$/, ""), token };
  });
}

export function findService(name: string): ServiceConfig | undefined {
  return dashboardConfig().services.find((s) => s.name === name);
}
