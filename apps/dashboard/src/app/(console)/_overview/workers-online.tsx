"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Badge } from "~/components/badge";
import { isMissingProcedure } from "~/trpc/errors";
import { useServiceTRPC } from "~/trpc/provider";

/** How often the count is read: the registry changes with heartbeats (10 s), not with the live depths. */
const WORKERS_REFRESH_MS = 10_000;

/** "3 workers online" (and gone ones) on a service's card, linking to the Workers page; reads no job. */
export function WorkersOnline({ service }: { service: string }) {
  const trpc = useServiceTRPC(service);
  const query = useQuery(trpc.workers.list.queryOptions({ jobs: false }, { refetchInterval: WORKERS_REFRESH_MS }));
  if (query.isPending) return null;
  if (query.isError) return isMissingProcedure(query.error) ? null : <p className="muted">Workers unavailable: {query.error.message}</p>;
  if (!query.data.enabled) return null;
  if (!query.data.supported) return <p className="muted" title={query.data.reason ?? undefined}>Workers: not registered on this queue</p>;
  const { online, gone } = query.data;
  return (
    <div className="row" data-workers-online={online}>
      <Link href={`/workers?service=${encodeURIComponent(service)}`}>
        {online} worker{online === 1 ? "" : "s"} online
      </Link>
      {online === 0 ? <Badge tone="warn" title="no worker process of this service heartbeats: queued jobs wait">none running</Badge> : null}
      {gone > 0 ? <Badge tone="bad" title="missed 3 heartbeats or more">{gone} gone</Badge> : null}
    </div>
  );
}
