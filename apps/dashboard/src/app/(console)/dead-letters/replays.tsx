"use client";
import { useQueries } from "@tanstack/react-query";
import { Card } from "~/components/card";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { useTRPC } from "~/trpc/provider";
import type { ReplayView } from "~/trpc/types";

interface Row {
  service: string;
  replay: ReplayView;
}

/** Throttled bulk retries (deadLetters.replays): how far each has come; refreshed every second while one runs. */
export function Replays({ services }: { services: string[] }) {
  const trpc = useTRPC();
  const queries = useQueries({
    queries: services.map((s) =>
      trpc(s).deadLetters.replays.queryOptions(undefined, {
        retry: false,
        refetchInterval: (query) => (query.state.data?.some((r) => r.finishedAt === null) ? 1000 : 30_000),
      }),
    ),
  });
  // A service without throttled replays (an older runtime) simply has none to show.
  const rows: Row[] = services.flatMap((s, i) => (queries[i]?.data ?? []).map((replay) => ({ service: s, replay }))).sort((a, b) => b.replay.startedAt.localeCompare(a.replay.startedAt));
  if (rows.length === 0) return null;
  return (
    <Card title="Replays" label="replays">
      <Table<Row>
        label="Replays"
        rows={rows.slice(0, 10)}
        rowKey={(r) => `${r.service}/${r.replay.replayId}`}
        columns={[
          { key: "started", header: "Started", cell: (r) => <RelativeTime iso={r.replay.startedAt} /> },
          { key: "service", header: "Service", cell: (r) => r.service },
          { key: "by", header: "By", cell: (r) => r.replay.by },
          { key: "filter", header: "Filter", cell: (r) => (r.replay.filter && Object.keys(r.replay.filter).length ? <code>{JSON.stringify(r.replay.filter)}</code> : <span className="muted">all</span>) },
          { key: "rate", header: "Rate", numeric: true, cell: (r) => `${r.replay.ratePerSecond}/s` },
          {
            key: "progress",
            header: "Progress",
            cell: (r) => {
              const { done, failed, total, finishedAt, totalExact, state, error } = r.replay;
              const status = state;
              const pct = total ? Math.round(((done + failed) / total) * 100) : 100;
              return (
                <div style={{ minWidth: 180 }} data-replay={r.replay.replayId} data-replay-done={done} data-replay-total={total} data-replay-state={status}>
                  <div className={`progress${status === "stopped" ? " progress-bad" : ""}`} role="progressbar" aria-label={`replay ${r.replay.replayId}`} aria-valuemin={0} aria-valuemax={total} aria-valuenow={done + failed}>
                    <div style={{ width: `${pct}%` }} />
                  </div>
                  <span className="muted">
                    {done} of {total}{totalExact ? "" : "+"} requeued{failed ? `, ${failed} skipped (already retried or discarded)` : ""} · {status}
                  </span>
                  {error ? <div className="error-text">{error}</div> : null}
                </div>
              );
            },
          },
        ]}
      />
    </Card>
  );
}
