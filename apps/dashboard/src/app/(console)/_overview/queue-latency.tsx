"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Stat } from "~/components/card";
import { formatMs } from "~/components/stats-charts";
import { Table } from "~/components/table";
import { isMissingProcedure } from "~/trpc/errors";
import { useServiceTRPC } from "~/trpc/provider";
import type { AdminOutputs, OverviewData } from "~/trpc/types";

type QueueLatencyRow = AdminOutputs["stats"]["latency"]["queues"][number];
type Depths = NonNullable<Extract<OverviewData["queue"], { enabled: true }>["depths"]>;

/**
 * Each queue's depth beside its latency over the last hour (wait and run p95, from stats.latency), and the oldest
 * waiting job's age: how long the longest-waiting job due now has waited, on any of the service's queues.
 */
export function QueueLatency({ service, queues }: { service: string; queues: Array<{ name: string; depths: Depths }> }) {
  const trpc = useServiceTRPC(service);
  const query = useQuery(trpc.stats.latency.queryOptions({ since: "1h" }));
  if (query.isPending) return <p className="muted">Loading latency…</p>;
  if (query.isError) return isMissingProcedure(query.error) ? null : <p className="muted">Latency unavailable: {query.error.message}</p>;
  if (!query.data.enabled) return <p className="muted">No latency history: {query.data.reason}</p>;
  const byQueue = new Map<string, QueueLatencyRow>(query.data.queues.map((q) => [q.queue, q]));
  const waiting = query.data.queues.map((q) => q.oldestWaitingMs).filter((ms): ms is number => ms !== null);
  const oldest = waiting.length > 0 ? Math.max(...waiting) : null;
  const rows = queues.map((q) => ({ ...q, latency: byQueue.get(q.name) ?? null }));
  return (
    <div className="stack" style={{ gap: 8 }}>
      <div className="stats" style={{ gridTemplateColumns: "repeat(2, 1fr)" }} role="group" aria-label={`latency of ${service}`}>
        <Stat label="Oldest waiting" value={oldest === null ? "none" : formatMs(oldest)} bad={oldest !== null && oldest > 60_000} />
        <Stat label="Wait p95 (1 h)" value={formatMs(mergedP95(query.data.queues))} />
      </div>
      <Table
        label={`Depth and latency per queue of ${service}`}
        rows={rows}
        rowKey={(r) => r.name}
        columns={[
          { key: "queue", header: "Queue", cell: (r) => <code>{r.name}</code> },
          { key: "ready", header: "Ready", numeric: true, cell: (r) => r.depths.ready },
          { key: "running", header: "Running", numeric: true, cell: (r) => r.depths.running },
          { key: "wait", header: "Wait p95", numeric: true, cell: (r) => formatMs(r.latency?.waitMs.p95) },
          { key: "run", header: "Run p95", numeric: true, cell: (r) => formatMs(r.latency?.runMs.p95) },
          { key: "oldest", header: "Oldest waiting", numeric: true, cell: (r) => formatMs(r.latency?.oldestWaitingMs) },
        ]}
      />
      <Link href="/stats">Charts of throughput, run time and wait →</Link>
    </div>
  );
}

/** The worst queue's wait p95: percentiles of different queues do not add up, so the page shows the highest. */
function mergedP95(queues: QueueLatencyRow[]): number | null {
  const values = queues.map((q) => q.waitMs.p95).filter((v): v is number => v !== null);
  return values.length > 0 ? Math.max(...values) : null;
}
