"use client";
import { QueryClientProvider } from "@tanstack/react-query";
import { createContext, useContext, useState, type ReactNode } from "react";
import { LiveUpdates } from "./live";
import { makeQueryClient } from "./query-client";

interface DashboardSettings {
  /** The names (only the names) of the configured services. */
  services: string[];
  /** JFAST_DASHBOARD_TRACE_URL: a link template with `{traceId}`, or null. */
  traceUrl: string | null;
}

const SettingsContext = createContext<DashboardSettings>({ services: [], traceUrl: null });

/** React Query for the admin views, live updates, and what the browser may know of the configuration. */
export function DashboardProvider({ services, traceUrl, children }: DashboardSettings & { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [settings] = useState<DashboardSettings>({ services, traceUrl });
  return (
    <QueryClientProvider client={queryClient}>
      <SettingsContext.Provider value={settings}>
        <LiveUpdates>{children}</LiveUpdates>
      </SettingsContext.Provider>
    </QueryClientProvider>
  );
}

export function useServices(): string[] {
  return useContext(SettingsContext).services;
}

export function useTraceUrl(): string | null {
  return useContext(SettingsContext).traceUrl;
}
