"use client";
import { QueryClientProvider } from "@tanstack/react-query";
import { createContext, useContext, useState, type ReactNode } from "react";
import { makeQueryClient } from "./query-client";

const ServicesContext = createContext<string[]>([]);

/** React Query for the admin views, and the names (only the names) of the configured services. */
export function DashboardProvider({ services, children }: { services: string[]; children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  return (
    <QueryClientProvider client={queryClient}>
      <ServicesContext.Provider value={services}>{children}</ServicesContext.Provider>
    </QueryClientProvider>
  );
}

export function useServices(): string[] {
  return useContext(ServicesContext);
}
