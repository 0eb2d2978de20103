import { createTRPCClient, httpLink } from "@trpc/client";
import type { AdminRouter } from "@jfast/runtime/admin";
import { dashboardConfig, type ServiceConfig } from "~/server/config";

/** How long the dashboard waits for one service before showing it as down. */
export const SERVICE_TIMEOUT_MS = 10_000;

export function adminUrl(service: ServiceConfig): string {
  return `${service.url}/jfast/admin`;
}

/** One server-side tRPC client per service, carrying that service's bearer token (which never reaches a browser). */
export function serviceClient(service: ServiceConfig) {
  return createTRPCClient<AdminRouter>({
    links: [
      httpLink({
        url: adminUrl(service),
        headers: () => ({ authorization: `Bearer ${service.token}` }),
        fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS), cache: "no-store" }),
      }),
    ],
  });
}

export function serviceNames(): string[] {
  return dashboardConfig().services.map((s) => s.name);
}
