import { QueryClient } from "@tanstack/react-query";

/** Live data: every admin view refetches on this interval (polling; see docs/dashboard.md). */
export const REFRESH_MS = 3000;

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        refetchInterval: REFRESH_MS,
        staleTime: 1000,
        // A refused call (401/403/404) will not succeed by asking again; an outage might.
        retry: (failures, error) => failures < 2 && !/UNAUTHORIZED|FORBIDDEN|NOT_FOUND|BAD_REQUEST/.test(errorCode(error)),
      },
    },
  });
}

export function errorCode(error: unknown): string {
  return (error as { data?: { code?: string } } | null)?.data?.code ?? "";
}
