"use client";
import { useQueryClient, type Query } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import type { LiveMessage } from "~/server/live-change";
import { useTRPC } from "./provider";
import { setLiveMode, type LiveMode } from "./query-client";

/** How long to wait before trying server-sent events again after the stream was refused or cut for good. */
const SSE_RETRY_MS = 30_000;

interface LiveState {
  mode: LiveMode;
  /** Pushes received since the page loaded (shown in the indicator's tooltip, read by the browser tests). */
  updates: number;
}

const LiveContext = createContext<LiveState>({ mode: "connecting", updates: 0 });

// Queries a push does not refresh: the data came with the push, or it must not change under the user's eyes.
const NOT_INVALIDATED = new Set(["overview.get", "overview.whoami", "outbox.status", "events.status", "contracts.graph", "deadLetters.preview"]);

/** "deadLetters.list" from a router key: `[[service], ["deadLetters", "list"], { input, type }]`. */
function procedureOf(query: Query): string {
  const path = query.queryKey[1];
  return Array.isArray(path) ? path.join(".") : "";
}

/**
 * Subscribes to /api/stream with EventSource. Each push sets that service's overview in React Query's cache and
 * marks the service's other views stale, so the open page refetches what changed. If the stream fails, views
 * poll every few seconds instead until it works again.
 */
export function LiveUpdates({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const trpc = useTRPC();
  const [state, setState] = useState<LiveState>({ mode: "connecting", updates: 0 });

  useEffect(() => {
    let source: EventSource | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let mode: LiveMode = "connecting";
    const switchTo = (next: LiveMode) => {
      if (next === mode) return;
      mode = next;
      setLiveMode(next);
      setState((s) => ({ ...s, mode: next }));
      // Re-arm every query's timer with the new interval (polling needs it now, not in 30 s).
      if (next === "polling") void queryClient.invalidateQueries();
    };
    const apply = (message: LiveMessage) => {
      const service = trpc(message.service);
      if (message.overview) queryClient.setQueryData(service.overview.get.queryKey(), message.overview);
      if (message.outbox) queryClient.setQueryData(service.outbox.status.queryKey(), message.outbox);
      if (message.events) queryClient.setQueryData(service.events.status.queryKey(), message.events);
      void queryClient.invalidateQueries(service.pathFilter({ predicate: (query) => message.error !== null || !NOT_INVALIDATED.has(procedureOf(query)) }));
      setState((s) => ({ ...s, updates: s.updates + 1 }));
    };
    const connect = () => {
      source = new EventSource("/api/stream");
      source.addEventListener("open", () => switchTo("sse"));
      source.addEventListener("service", (event) => apply(JSON.parse((event as MessageEvent<string>).data) as LiveMessage));
      source.addEventListener("error", () => {
        switchTo("polling");
        // CONNECTING: the browser reconnects by itself. CLOSED: it gave up (a refusal, a proxy that cut it); try later.
        if (source?.readyState === EventSource.CLOSED) {
          source.close();
          retry = setTimeout(connect, SSE_RETRY_MS);
        }
      });
    };
    connect();
    return () => {
      source?.close();
      clearTimeout(retry);
    };
  }, [queryClient, trpc]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}

export function useLive(): LiveState {
  return useContext(LiveContext);
}
