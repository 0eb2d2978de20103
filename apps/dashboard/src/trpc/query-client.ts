import { QueryClient } from "@tanstack/react-query";
import { errorCode } from "./errors";

/**
 * Polling interval of each service's overview while server-sent events are not available (see docs/dashboard.md,
 * "Live data"); views are re-read when the overview says a part they show changed (live.tsx).
 */
export const REFRESH_MS = 3000;
/** Views refetch when a push or the polled overview says their part changed; this is only a safety net. */
export const SSE_SAFETY_REFRESH_MS = 30_000;

export type LiveMode = "connecting" | "sse" | "polling";

let liveMode: LiveMode = "connecting";

/** Set by the live-updates provider; every query reads it when it arms its next refetch. */
export function setLiveMode(mode: LiveMode): void {
  liveMode = mode;
}

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Until the stream answers, views poll as before; once it did (or failed over to polling the overview),
        // they are re-read when their part changes.
        refetchInterval: () => (liveMode === "connecting" ? REFRESH_MS : SSE_SAFETY_REFRESH_MS),
        staleTime: 1000,
        // Pushes or polling keep views current; a refetch on every return to the tab would only add load.
        refetchOnWindowFocus: false,
        // A refused call (401/403/404) will not succeed by asking again; an outage might.
        retry: (failures, error) => failures < 2 && !/UNAUTHORIZED|FORBIDDEN|NOT_FOUND|BAD_REQUEST/.test(errorCode(error)),
      },
    },
  });
}
