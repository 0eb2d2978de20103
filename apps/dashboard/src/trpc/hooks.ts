"use client";
import { useQueries } from "@tanstack/react-query";
import { usePerson, useTRPC } from "./provider";

/** The caller's role on each service (viewer or operator), so the UI can disable what the token may not do. */
export function useRoles(services: string[]) {
  const trpc = useTRPC();
  const results = useQueries({
    queries: services.map((service) => trpc(service).overview.whoami.queryOptions(undefined, { refetchInterval: 60_000 })),
  });
  return Object.fromEntries(services.map((s, i) => [s, results[i]?.data?.role ?? null])) as Record<string, "viewer" | "operator" | null>;
}

/**
 * What the signed-in person may do, whatever the services' tokens allow: viewers change nothing, operators act on
 * rows and tasks, admins also on every dead letter a filter selects. Buttons a person may not use are not shown;
 * the dashboard's server refuses the calls anyway (src/trpc/server.ts, mayCall).
 */
export function useMayAct(): { act: boolean; bulk: boolean } {
  const { role } = usePerson();
  return { act: role !== "viewer", bulk: role === "admin" };
}
