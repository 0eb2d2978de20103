"use client";
import { useQueries, useQuery } from "@tanstack/react-query";
import { adminClient } from "./client";

/** The caller's role on each service (viewer or operator), so the UI can disable what the token may not do. */
export function useRoles(services: string[]) {
  const results = useQueries({
    queries: services.map((service) => ({
      queryKey: [service, "overview.whoami"],
      queryFn: () => adminClient(service).overview.whoami.query(),
      refetchInterval: 60_000,
    })),
  });
  return Object.fromEntries(services.map((s, i) => [s, results[i]?.data?.role ?? null])) as Record<string, "viewer" | "operator" | null>;
}

export function useOverview(service: string) {
  return useQuery({ queryKey: [service, "overview.get"], queryFn: () => adminClient(service).overview.get.query() });
}
