"use client";
import type { QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpLink } from "@trpc/client";
import { createTRPCOptionsProxy, type TRPCOptionsProxy } from "@trpc/tanstack-react-query";
import type { AdminRouter } from "@jfast/runtime/admin";
import { withBase } from "~/base-path";

/**
 * One service's admin API as typed query and mutation options. Its keys start with the service's name
 * (`[[service], ["deadLetters", "list"], { input, type }]`), so services never share a cache entry and
 * `trpc.pathFilter()` matches everything of one service.
 */
export type AdminTRPC = TRPCOptionsProxy<AdminRouter, { keyPrefix: true }>;

/** Through the dashboard's server, which adds the service's token. httpLink: the admin API refuses batches. */
function adminClient(service: string) {
  return createTRPCClient<AdminRouter>({
    links: [httpLink({ url: withBase(`/api/admin/${encodeURIComponent(service)}`) })],
  });
}

/** A per-service proxy factory over one QueryClient: one tRPC client and one proxy per service, made once. */
export function adminProxies(queryClient: QueryClient): (service: string) => AdminTRPC {
  const proxies = new Map<string, AdminTRPC>();
  return (service) => {
    let proxy = proxies.get(service);
    if (!proxy) {
      proxy = createTRPCOptionsProxy<AdminRouter, { keyPrefix: true }>({ client: adminClient(service), queryClient, keyPrefix: service });
      proxies.set(service, proxy);
    }
    return proxy;
  };
}
