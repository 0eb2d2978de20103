"use client";
import { useQueries } from "@tanstack/react-query";
import { useTRPC } from "./provider";

/** The caller's role on each service (viewer or operator), so the UI can disable what the token may not do. */
export function useRoles(services: string[]) {
  const trpc = useTRPC();
  const results = useQueries({
    queries: services.map((service) => trpc(service).overview.whoami.queryOptions(undefined, { refetchInterval: 60_000 })),
  });
  return Object.fromEntries(services.map((s, i) => [s, results[i]?.data?.role ?? null])) as Record<string, "viewer" | "operator" | null>;
}
