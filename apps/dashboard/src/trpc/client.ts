"use client";
import { createTRPCClient, httpLink } from "@trpc/client";
import type { AdminRouter } from "@jfast/runtime/admin";

const clients = new Map<string, ReturnType<typeof create>>();

function create(service: string) {
  return createTRPCClient<AdminRouter>({
    links: [httpLink({ url: `/api/admin/${encodeURIComponent(service)}` })],
  });
}

/** A typed admin client for one service, through the dashboard's server (which adds the token). */
export function adminClient(service: string) {
  let client = clients.get(service);
  if (!client) {
    client = create(service);
    clients.set(service, client);
  }
  return client;
}
