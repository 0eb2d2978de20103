import { createTRPCClient, httpLink } from "@trpc/client";
import type { AdminRouter } from "@jfast/runtime/admin";
import { dashboardConfig, type DashboardRole, type ServiceConfig } from "~/server/config";

/** How long the dashboard waits for one service before showing it as down. */
export const SERVICE_TIMEOUT_MS = 10_000;

/** The header a service's audit trail reads the acting person from (trusted from a dashboard's token only). */
export const ACTOR_HEADER = "x-jfast-actor";

export function adminUrl(service: ServiceConfig): string {
  return `${service.url}/jfast/admin`;
}

/** `x-jfast-actor: <role> <percent-encoded name>`, as @jfast/runtime's admin API reads it. */
export function actorHeaders(person: { name: string; role: DashboardRole } | null): Record<string, string> {
  return person ? { [ACTOR_HEADER]: `${person.role} ${encodeURIComponent(person.name)}` } : {};
}

/** Mutations that act on every job a filter selects: admins only. */
const BULK = new Set(["deadLetters.retryMatching", "deadLetters.discardMatching", "jobs.bulk"]);

/** Why `person` may not call the mutation `procedure`, or null when they may. */
export function mayCall(person: { role: DashboardRole }, procedure: string): string | null {
  if (person.role === "viewer") return "viewers cannot change anything: ask an operator (jfast docs dashboard#users)";
  if (BULK.has(procedure) && person.role !== "admin") return `${procedure} acts on every matching job: it needs the admin role (jfast docs dashboard#users)`;
  return null;
}

/** Thrown when code on the server would call a service for nobody: every call is made for a signed-in person. */
export class SignInRequiredError extends Error {
  constructor() {
    super("no one is signed in: the dashboard calls a service only for a signed-in person (jfast docs security)");
    this.name = "SignInRequiredError";
  }
}

/**
 * One server-side tRPC client per service, carrying that service's bearer token (which never reaches a browser)
 * and the person the page is rendered for. Without a person it refuses to exist: a request that skipped the
 * sign-in check (src/proxy.ts, the console layout) still cannot reach a service.
 */
export function serviceClient(service: ServiceConfig, person: { name: string; role: DashboardRole } | null) {
  if (!person || typeof person.name !== "string" || !person.name) throw new SignInRequiredError();
  return clientFor(service, actorHeaders(person));
}

/** The live poller's client (src/server/live-hub.ts): no person, so a dashboard's token only reads with it. */
export function pollerClient(service: ServiceConfig) {
  return clientFor(service, {});
}

function clientFor(service: ServiceConfig, actor: Record<string, string>) {
  return createTRPCClient<AdminRouter>({
    links: [
      httpLink({
        url: adminUrl(service),
        headers: () => ({ authorization: `Bearer ${service.token}`, ...actor }),
        fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS), cache: "no-store" }),
      }),
    ],
  });
}

export function serviceNames(): string[] {
  return dashboardConfig().services.map((s) => s.name);
}
