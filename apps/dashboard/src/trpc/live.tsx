"use client";
import { useQueryClient, type Query } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import { withBase } from "~/base-path";
import { changedParts, isStale, partPrints, rereadDelay, type LiveMessage, type LivePart, type PartPrints } from "~/server/live-change";
import { useServices, useTRPC } from "./provider";
import { REFRESH_MS, setLiveMode, type LiveMode } from "./query-client";

/** How long to wait before trying server-sent events again after the stream was refused or cut for good. */
const SSE_RETRY_MS = 30_000;

interface LiveState {
  mode: LiveMode;
  /** Pushes received since the page loaded (shown in the indicator's tooltip, read by the browser tests). */
  updates: number;
}

const LiveContext = createContext<LiveState>({ mode: "connecting", updates: 0 });

/** How often a tab that has the stream answers its pings (the server drops a stream silent for longer: route.ts). */
const PONG_PATH = "/api/stream/pong";

/** "deadLetters.list" from a router key: `[[service], ["deadLetters", "list"], { input, type }]`. */
function procedureOf(query: Query): string {
  const path = query.queryKey[1];
  return Array.isArray(path) ? path.join(".") : "";
}

/**
 * Subscribes to /api/stream with EventSource. Each push sets that service's overview in React Query's cache and
 * marks stale only the views showing a part the push says changed (live-change.ts), so the open page re-reads
 * what changed and nothing else: with jobs flowing the depths change every push, the dead letters seldom. If the
 * stream fails, the overview is polled every few seconds instead and compared the same way.
 */
export function LiveUpdates({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const trpc = useTRPC();
  // Read when polling, so a new array with the same names does not reconnect the stream.
  const serviceNames = useServices();
  const services = useRef(serviceNames);
  services.current = serviceNames;
  const [state, setState] = useState<LiveState>({ mode: "connecting", updates: 0 });

  useEffect(() => {
    let source: EventSource | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let poll: ReturnType<typeof setInterval> | undefined;
    let mode: LiveMode = "connecting";
    const polled = new Map<string, PartPrints>();
    // Costly views read a moment ago wait for their least interval (live-change.ts), then are re-read once.
    const deferred = new Map<string, ReturnType<typeof setTimeout>>();
    const invalidate = (name: string, changed: readonly LivePart[], error: boolean) => {
      const now = Date.now();
      const predicate = (query: Query) => {
        if (!isStale(procedureOf(query), changed, error)) return false;
        const wait = error ? 0 : rereadDelay(procedureOf(query), query.state.dataUpdatedAt, now);
        if (wait === 0) return true;
        if (!deferred.has(query.queryHash)) {
          const hash = query.queryHash;
          deferred.set(hash, setTimeout(() => {
            deferred.delete(hash);
            void queryClient.invalidateQueries({ predicate: (q) => q.queryHash === hash });
          }, wait));
        }
        return false;
      };
      void queryClient.invalidateQueries(trpc(name).pathFilter({ predicate }));
    };
    // Without the stream: each service's overview every few seconds, compared part by part as the server does.
    const pollOverviews = () => {
      for (const name of services.current) {
        void queryClient.fetchQuery({ ...trpc(name).overview.get.queryOptions(), staleTime: 0 }).then(
          (overview) => {
            const prints = partPrints({ overview, outbox: null, events: null, error: null });
            const changed = changedParts(polled.get(name), prints);
            polled.set(name, prints);
            // The outbox and Kafka status are not in the overview: re-read with the depths.
            if (changed.length) invalidate(name, changed.includes("depths") ? [...changed, "outbox", "events"] : changed, false);
          },
          () => invalidate(name, [], true),
        );
      }
    };
    const switchTo = (next: LiveMode) => {
      if (next === mode) return;
      mode = next;
      setLiveMode(next);
      setState((s) => ({ ...s, mode: next }));
      clearInterval(poll);
      if (next === "polling") {
        polled.clear();
        pollOverviews();
        poll = setInterval(pollOverviews, REFRESH_MS);
      }
    };
    const apply = (message: LiveMessage) => {
      const service = trpc(message.service);
      if (message.overview) queryClient.setQueryData(service.overview.get.queryKey(), message.overview);
      if (message.outbox) queryClient.setQueryData(service.outbox.status.queryKey(), message.outbox);
      if (message.events) queryClient.setQueryData(service.events.status.queryKey(), message.events);
      // A server older than the parts sends none: everything may have changed.
      invalidate(message.service, message.changed ?? ["health", "setup", "depths", "deadLetters", "outbox", "events"], message.error !== null);
      setState((s) => ({ ...s, updates: s.updates + 1 }));
    };
    const connect = () => {
      source = new EventSource(withBase("/api/stream"));
      source.addEventListener("open", () => switchTo("sse"));
      source.addEventListener("service", (event) => apply(JSON.parse((event as MessageEvent<string>).data) as LiveMessage));
      // The server drops a stream whose tab stopped answering (one that vanished without closing it).
      source.addEventListener("ping", (event) => {
        void fetch(`${withBase(PONG_PATH)}?id=${encodeURIComponent((event as MessageEvent<string>).data)}`, { method: "POST" }).catch(() => {});
      });
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
      clearInterval(poll);
      for (const timer of deferred.values()) clearTimeout(timer);
    };
  }, [queryClient, trpc]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}

export function useLive(): LiveState {
  return useContext(LiveContext);
}
