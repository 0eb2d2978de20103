import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { dashboardConfig } from "./config";
import { prefetchFirstData, type FirstQueries } from "./first-data";

export { FIRST_DATA_BUDGET_MS, type FirstQueries } from "./first-data";
import { requirePerson } from "./session";

/**
 * Renders `children` with the answers to `queries` already in React Query's cache, so the page's first HTML
 * carries its data instead of waiting for the browser to load, hydrate and ask. The keys are the ones the
 * browser's `useTRPC()(service)` makes for the same procedure and input, so the page's own queries find them.
 * Each call goes to the service from this server with the service's token and the signed-in person, exactly
 * as the browser's calls through /api/admin do.
 */
export async function WithFirstData({ queries, services: only, children }: { queries: FirstQueries; services?: readonly string[]; children: ReactNode }) {
  // Not only the console layout's check: Next.js skips a layout the client says it already has.
  const person = await requirePerson();
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  await prefetchFirstData({ person, queryClient, services: dashboardConfig().services.filter((s) => !only || only.includes(s.name)), queries });
  // Only answers go to the browser: a failed or unfinished call is made again there, and shown as it fails.
  return <HydrationBoundary state={dehydrate(queryClient)}>{children}</HydrationBoundary>;
}
