import type { FetchQueryOptions, QueryClient, QueryKey } from "@tanstack/react-query";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import type { AdminRouter } from "@jfast/runtime/admin";
import type { AdminTRPC } from "~/trpc/client";
import { serviceClient, SignInRequiredError } from "~/trpc/server";
import type { DashboardRole, ServiceConfig } from "./config";

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
 * Fills `queryClient` with the answers to `queries` from each service, for `person`, within the budget. Without a
 * person it throws before any service is called (docs/security.md): whatever page renders it, nobody's data.
 */
export async function prefetchFirstData(params: { person: { name: string; role: DashboardRole } | null; queryClient: QueryClient; services: readonly ServiceConfig[]; queries: FirstQueries }): Promise<void> {
  const { person, queryClient, services, queries } = params;
  if (!person) throw new SignInRequiredError();
  const pending = services.flatMap((service) => {
    const trpc = createTRPCOptionsProxy<AdminRouter, { keyPrefix: true }>({ client: serviceClient(service, person), queryClient, keyPrefix: service.name });
    return queries(trpc as AdminTRPC, service.name).map((options) => queryClient.prefetchQuery(options as FetchQueryOptions));
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(pending), new Promise((resolve) => (timer = setTimeout(resolve, FIRST_DATA_BUDGET_MS)))]);
  clearTimeout(timer);
}
