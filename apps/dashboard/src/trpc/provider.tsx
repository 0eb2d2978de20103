"use client";
import { QueryClientProvider } from "@tanstack/react-query";
import { createContext, useContext, useState, type ReactNode } from "react";
import { adminProxies, type AdminTRPC } from "./client";
import { LiveUpdates } from "./live";
import { makeQueryClient } from "./query-client";

interface DashboardSettings {
  /** The names (only the names) of the configured services. */
  services: string[];
  /** JFAST_DASHBOARD_TRACE_URL: a link template with `{traceId}`, or null. */
  traceUrl: string | null;
  /** The signed-in person (the server enforces the role; the browser only hides what it would refuse). */
  person: SignedIn;
}

export interface SignedIn {
  name: string;
  role: "viewer" | "operator" | "admin";
  via: "session" | "proxy";
}

const SettingsContext = createContext<DashboardSettings>({ services: [], traceUrl: null, person: { name: "", role: "viewer", via: "session" } });
const TRPCContext = createContext<((service: string) => AdminTRPC) | null>(null);

/** React Query, the admin API of each service on it, live updates, and what the browser may know of the configuration. */
export function DashboardProvider({ services, traceUrl, person, children }: DashboardSettings & { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpc] = useState(() => adminProxies(queryClient));
  const [settings] = useState<DashboardSettings>({ services, traceUrl, person });
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCContext.Provider value={trpc}>
        <SettingsContext.Provider value={settings}>
          <LiveUpdates>{children}</LiveUpdates>
        </SettingsContext.Provider>
      </TRPCContext.Provider>
    </QueryClientProvider>
  );
}

/** For views over several services: `const trpc = useTRPC(); services.map((s) => trpc(s).queues.list.queryOptions())`. */
export function useTRPC(): (service: string) => AdminTRPC {
  const trpc = useContext(TRPCContext);
  if (!trpc) throw new Error("useTRPC needs the DashboardProvider");
  return trpc;
}

/** One service's admin API: `useServiceTRPC("billing").deadLetters.list.queryOptions(input)`. */
export function useServiceTRPC(service: string): AdminTRPC {
  return useTRPC()(service);
}

export function useServices(): string[] {
  return useContext(SettingsContext).services;
}

export function useTraceUrl(): string | null {
  return useContext(SettingsContext).traceUrl;
}

export function usePerson(): SignedIn {
  return useContext(SettingsContext).person;
}
