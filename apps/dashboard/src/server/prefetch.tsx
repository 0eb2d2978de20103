import { dehydrate, HydrationBoundary, QueryClient, type FetchQueryOptions, type QueryKey } from "@tanstack/react-query";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import type { ReactNode } from "react";
import type { AdminRouter } from "@jfast/runtime/admin";
import type { AdminTRPC } from "~/trpc/client";
import { serviceClient } from "~/trpc/server";
import { dashboardConfig } from "./config";
import { currentPerson } from "./session";

/**
 * How long a page's server render waits for its first data. A service slower than this (or down) is asked again
 * by the browser, as without a first answer; the page is never held longer on its account.
 */
export const FIRST_DATA_BUDGET_MS = 1000;

/** What `trpc.<procedure>.queryOptions(input)` gives, as far as prefetching needs it (each procedure's own type differs). */
interface FirstQuery {
  queryKey: QueryKey;
  queryFn?: unknown;
}

/** The queries a page shows first, for one service: `(trpc) => [trpc.queues.list.queryOptions()]`. */
export type FirstQueries = (trpc: AdminTRPC, service: string) => readonly FirstQuery[];

/**
 * Renders `children` with the answers to `queries` already in React Query's cache, so the page's first HTML
 * carries its data instead of waiting for the browser to load, hydrate and ask. The keys are the ones the
 * browser's `useTRPC()(service)` makes for the same procedure and input, so the page's own queries find them.
 * Each call goes to the service from this server with the service's token and the signed-in person, exactly
 * as the browser's calls through /api/admin do.
 */
export async function WithFirstData({ queries, services: only, children }: { queries: FirstQueries; services?: readonly string[]; children: ReactNode }) {
  const person = await currentPerson();
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const services = dashboardConfig().services.filter((s) => !only || only.includes(s.name));
  const pending = services.flatMap((service) => {
    const trpc = createTRPCOptionsProxy<AdminRouter, { keyPrefix: true }>({ client: serviceClient(service, person), queryClient, keyPrefix: service.name });
    return queries(trpc as AdminTRPC, service.name).map((options) => queryClient.prefetchQuery(options as FetchQueryOptions));
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(pending), new Promise((resolve) => (timer = setTimeout(resolve, FIRST_DATA_BUDGET_MS)))]);
  clearTimeout(timer);
  // Only answers go to the browser: a failed or unfinished call is made again there, and shown as it fails.
  return <HydrationBoundary state={dehydrate(queryClient)}>{children}</HydrationBoundary>;
}
