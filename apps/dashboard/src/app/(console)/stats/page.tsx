"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { Card } from "~/components/card";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { formatMs, LatencyChart, ThroughputChart } from "~/components/stats-charts";
import { Table } from "~/components/table";
import { REFRESH_MS } from "~/trpc/query-client";
import { useServiceTRPC, useServices } from "~/trpc/provider";
import type { AdminOutputs } from "~/trpc/types";

type Latency = AdminOutputs["stats"]["latency"];
type TaskRow = Latency["tasks"][number];
type QueueRow = Latency["queues"][number];
type Percentiles = TaskRow["runMs"];

const RANGES = ["1h", "24h", "7d"] as const;
type Range = (typeof RANGES)[number];

/** Throughput, run time and wait per service over 1 h, 24 h or 7 d, as every worker process recorded them. */
export default function StatsPage() {
  const services = useServices();
  const [range, setRange] = useState<Range>("1h");
  return (
    <>
      <h1>Stats</h1>
      <p className="muted">
        Jobs completed, failed and dead-lettered, how long attempts ran and how long jobs waited from due to started, per minute (1 h, 24 h) or per hour (7 d). Every worker process of a
        service adds its counts to the service&apos;s store every few seconds; percentiles are read from log buckets (within 9 %).
      </p>
      <div className="row" role="group" aria-label="Time range">
        {RANGES.map((r) => (
          <Button key={r} small variant={r === range ? "primary" : "default"} aria-pressed={r === range} onClick={() => setRange(r)}>
            {r}
          </Button>
        ))}
      </div>
      <div className="stack" style={{ marginTop: 12 }}>
        {services.length === 0 ? <EmptyState title="No services configured" /> : null}
        {services.map((service) => (
          <ServiceStats key={service} service={service} range={range} />
        ))}
      </div>
    </>
  );
}

function ServiceStats({ service, range }: { service: string; range: Range }) {
  const trpc = useServiceTRPC(service);
  const [task, setTask] = useState("");
  const latency = useQuery(trpc.stats.latency.queryOptions({ since: range }, { refetchInterval: REFRESH_MS * 2 }));
  const series = useQuery(trpc.stats.series.queryOptions({ since: range, ...(task ? { task } : {}) }, { refetchInterval: REFRESH_MS * 2 }));
  const id = `task-${service}`;
  return (
    <Card title={service} label={`stats of ${service}`}>
      {latency.isPending || series.isPending ? (
        <Loading what="stats" />
      ) : latency.isError ? (
        <QueryError service={service} procedure="stats.latency" error={latency.error} what="throughput, run time and wait history" />
      ) : series.isError ? (
        <QueryError service={service} procedure="stats.series" error={series.error} what="throughput, run time and wait history" />
      ) : !latency.data.enabled ? (
        <EmptyState title="No history">{latency.data.reason ?? `${service} records none.`}</EmptyState>
      ) : (
        <div className="stack">
          <div className="row">
            <label htmlFor={id}>Task</label>
            <select id={id} value={task} onChange={(e) => setTask(e.target.value)}>
              <option value="">every task</option>
              {latency.data.tasks.map((t) => (
                <option key={`${t.queue}/${t.task}`} value={t.task}>
                  {t.task}
                </option>
              ))}
            </select>
            <span className="muted">
              stored in {latency.data.stored}, per {series.data.span}
            </span>
          </div>
          <div className="grid" style={{ gridTemplateColumns: "repeat(auto-fit, minmax(320px, 1fr))" }}>
            <section aria-label="Throughput">
              <h3 style={{ margin: "0 0 4px" }}>Throughput</h3>
              <ThroughputChart points={series.data.points} span={series.data.span} label={`${task || "every task"}, last ${range}`} />
            </section>
            <section aria-label="Run time">
              <h3 style={{ margin: "0 0 4px" }}>Run time</h3>
              <LatencyChart points={series.data.points} span={series.data.span} field="runMs" label={`Run time of ${task || "every task"}, last ${range}`} />
            </section>
            <section aria-label="Wait">
              <h3 style={{ margin: "0 0 4px" }}>Wait (due → started)</h3>
              <LatencyChart points={series.data.points} span={series.data.span} field="waitMs" label={`Wait of ${task || "every task"}, last ${range}`} />
            </section>
          </div>
          <Table<QueueRow>
            label={`Latency per queue of ${service}`}
            rows={latency.data.queues}
            rowKey={(r) => r.queue}
            columns={[
              { key: "queue", header: "Queue", cell: (r) => <code>{r.queue}</code> },
              { key: "completed", header: "Completed", numeric: true, cell: (r) => r.completed },
              { key: "failed", header: "Failed", numeric: true, cell: (r) => r.failed },
              { key: "dead", header: "Dead", numeric: true, cell: (r) => r.dead },
              { key: "run", header: "Run p50 / p95 / p99", cell: (r) => percentiles(r.runMs) },
              { key: "wait", header: "Wait p50 / p95 / p99", cell: (r) => percentiles(r.waitMs) },
              { key: "oldest", header: "Oldest waiting", cell: (r) => formatMs(r.oldestWaitingMs) },
            ]}
          />
          <Table<TaskRow>
            label={`Latency per task of ${service}`}
            rows={latency.data.tasks}
            rowKey={(r) => `${r.queue}/${r.task}`}
            empty={<EmptyState title="No attempts">No attempt ended in the last {range}.</EmptyState>}
            columns={[
              { key: "task", header: "Task", cell: (r) => <code>{r.task}</code> },
              { key: "queue", header: "Queue", cell: (r) => r.queue },
              { key: "completed", header: "Completed", numeric: true, cell: (r) => r.completed },
              { key: "failed", header: "Failed", numeric: true, cell: (r) => r.failed },
              { key: "dead", header: "Dead", numeric: true, cell: (r) => r.dead },
              { key: "run", header: "Run p50 / p95 / p99", cell: (r) => percentiles(r.runMs) },
              { key: "wait", header: "Wait p50 / p95 / p99", cell: (r) => percentiles(r.waitMs) },
            ]}
          />
        </div>
      )}
    </Card>
  );
}

function percentiles(p: Percentiles): string {
  return `${formatMs(p.p50)} / ${formatMs(p.p95)} / ${formatMs(p.p99)}`;
}
