"use client";
import { useQueries } from "@tanstack/react-query";
import { Badge } from "~/components/badge";
import { Card, Stat } from "~/components/card";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import type { EventsStatusView, PartitionView } from "~/trpc/types";
import { useServices, useTRPC } from "~/trpc/provider";

/** Kafka consumers per service: lag per partition, and partitions blocked on a message that keeps failing. */
export default function EventsPage() {
  const services = useServices();
  const trpc = useTRPC();
  const queries = useQueries({ queries: services.map((s) => trpc(s).events.status.queryOptions()) });
  return (
    <>
      <h1>Events (Kafka)</h1>
      <div className="stack">
        {services.length === 0 ? <EmptyState title="No services configured" /> : null}
        {services.map((s, i) => {
          const q = queries[i]!;
          const blocked = q.data?.partitions.filter((p) => p.blocked).length ?? 0;
          return (
            <Card
              key={s}
              title={s}
              label={`events of ${s}`}
              actions={q.data?.enabled && q.data.reported ? (<>{q.data.group ? <Badge tone="neutral" title="consumer group">{q.data.group}</Badge> : null}<Badge tone={blocked ? "bad" : "ok"}>{blocked ? `${blocked} blocked` : "flowing"}</Badge></>) : null}
            >
              {q.isPending ? (
                <Loading what="Kafka status" />
              ) : q.isError ? (
                <QueryError service={s} procedure="events.status" error={q.error} what="Kafka lag" />
              ) : !q.data.enabled ? (
                <EmptyState title="Kafka events not enabled">{s} does not enable the kafka plugin (<code>[plugins] enabled = [&quot;kafka&quot;]</code> and <code>[plugin.kafka]</code>, <code>jfast docs kafka</code>).</EmptyState>
              ) : q.data.turnedOff ? (
                <EmptyState title="Turned off in this process">{s} enables the kafka plugin in jfast.toml, but <code>JFAST_DISABLE_PLUGINS</code> turned it off in the process answering the admin API (<code>jfast docs kafka</code>).</EmptyState>
              ) : !q.data.reported ? (
                <EmptyState title="Not reported yet">The kafka plugin is on, but its consumer has not reported partitions yet (it may still be joining the group{q.data.error ? `; last error: ${q.data.error}` : ""}).</EmptyState>
              ) : (
                <PartitionsView service={s} data={q.data} />
              )}
            </Card>
          );
        })}
      </div>
    </>
  );
}

function PartitionsView({ service, data }: { service: string; data: EventsStatusView }) {
  const lag = data.partitions.reduce((n, p) => n + p.lag, 0);
  return (
    <div className="stack">
      {data.error ? <p className="alert alert-bad" role="alert">The consumer reported: {data.error}</p> : null}
      <div className="stats" style={{ gridTemplateColumns: "repeat(3, 1fr)" }}>
        <Stat label="Partitions" value={data.partitions.length} />
        <Stat label="Total lag" value={lag} />
        <Stat label="Blocked" value={data.partitions.filter((p) => p.blocked).length} bad={data.partitions.some((p) => p.blocked)} />
      </div>
      {data.offsetsReadAt ? <p className="muted">Offsets read from the broker <RelativeTime iso={data.offsetsReadAt} />.</p> : null}
      <Table<PartitionView>
        label={`Kafka partitions of ${service}`}
        rows={data.partitions}
        rowKey={(p) => `${p.topic}/${p.partition}`}
        rowClass={(p) => (p.blocked ? "row-blocked" : undefined)}
        empty={<EmptyState title="No partitions assigned">This consumer holds no partition right now (another member of the group may have them).</EmptyState>}
        columns={[
          { key: "topic", header: "Topic", cell: (p) => <code>{p.topic}</code> },
          { key: "partition", header: "Partition", numeric: true, cell: (p) => p.partition },
          { key: "committed", header: "Committed", numeric: true, cell: (p) => p.committedOffset ?? <span className="muted">none</span> },
          { key: "end", header: "End", numeric: true, cell: (p) => p.endOffset },
          { key: "lag", header: "Lag", numeric: true, cell: (p) => p.lag },
          {
            key: "blocked",
            header: "Blocked on",
            cell: (p) =>
              p.blocked ? (
                <div>
                  <Badge tone="bad">offset {p.blocked.offset}</Badge> <span className="muted">{p.blocked.attempts} attempt{p.blocked.attempts === 1 ? "" : "s"}, since <RelativeTime iso={p.blocked.since} />, next retry <RelativeTime iso={p.blocked.nextRetryAt} /></span>
                  <div className="error-text">{p.blocked.error}</div>
                  {p.blocked.handler || p.blocked.eventType ? (
                    <div className="muted">
                      {p.blocked.eventType ? <code>{p.blocked.eventType}</code> : null}
                      {p.blocked.handler ? <> in <code>{p.blocked.handler}</code></> : null}
                      {p.blocked.eventId ? <> · event {p.blocked.eventId}</> : null}
                    </div>
                  ) : null}
                </div>
              ) : (
                <span className="muted">—</span>
              ),
          },
        ]}
      />
    </div>
  );
}
