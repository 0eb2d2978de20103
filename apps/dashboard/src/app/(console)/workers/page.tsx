"use client";
import { useQueries } from "@tanstack/react-query";
import Link from "next/link";
import { Badge } from "~/components/badge";
import { Card } from "~/components/card";
import { Elapsed } from "~/components/elapsed";
import { EmptyState, Loading } from "~/components/empty-state";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { REFRESH_MS } from "~/trpc/query-client";
import { useServices, useTRPC } from "~/trpc/provider";
import type { RunningJobItem, WorkerItem, WorkersList } from "~/trpc/types";

/** Who runs what right now: each service's registered workers, and the jobs they run with progress and elapsed time. */
export default function WorkersPage() {
  const services = useServices();
  const trpc = useTRPC();
  // The registry changes with heartbeats, not with the depths the live stream announces: read it on a timer.
  const queries = useQueries({ queries: services.map((s) => trpc(s).workers.list.queryOptions({}, { refetchInterval: REFRESH_MS })) });
  return (
    <>
      <h1>Workers</h1>
      <p className="muted">
        Every worker process registers with its service's queue and heartbeats every few seconds; one that missed 3 heartbeats is shown as <strong>gone</strong> until it is forgotten.
      </p>
      <div className="stack">
        {services.map((s, i) => {
          const q = queries[i]!;
          return (
            <Card
              key={s}
              title={s}
              label={`workers of ${s}`}
              actions={q.data?.supported ? <Counts data={q.data} /> : null}
            >
              {q.isPending ? <Loading what="workers" /> : q.isError ? <QueryError service={s} procedure="workers.list" error={q.error} what="its workers" /> : <ServiceWorkers service={s} data={q.data} />}
            </Card>
          );
        })}
        {services.length === 0 ? <EmptyState title="No services configured" /> : null}
      </div>
    </>
  );
}

function Counts({ data }: { data: WorkersList }) {
  return (
    <>
      <Badge tone={data.online > 0 ? "ok" : "neutral"}>{data.online} online</Badge>
      {data.gone > 0 ? <Badge tone="bad" title={`missed ${data.goneAfterBeats} heartbeats or more`}>{data.gone} gone</Badge> : null}
    </>
  );
}

function ServiceWorkers({ service, data }: { service: string; data: WorkersList }) {
  if (!data.enabled) return <EmptyState title="No queue">This service does not run a queue.</EmptyState>;
  if (!data.supported) return <EmptyState title="No worker registry">{data.reason}</EmptyState>;
  if (data.workers.length === 0) {
    return (
      <EmptyState title="No worker registered">
        Start one with <code>jfast worker</code> (or <code>jfast dev</code>); it shows here within a heartbeat.
      </EmptyState>
    );
  }
  const jobs = data.workers.flatMap((w) => w.jobs.map((job) => ({ ...job, worker: w.id, workerState: w.state })));
  return (
    <div className="stack">
      <Table<WorkerItem>
        label={`Workers of ${service}`}
        rows={data.workers}
        rowKey={(w) => w.id}
        columns={[
          {
            key: "id",
            header: "Worker",
            cell: (w) => (
              <>
                <code className="nowrap">{w.id}</code>
                <div className="muted nowrap">
                  {w.host} · pid {w.pid}
                </div>
              </>
            ),
          },
          {
            key: "state",
            header: "State",
            cell: (w) =>
              w.state === "online" ? (
                <Badge tone="ok">online</Badge>
              ) : (
                <Badge tone="bad" title={`no heartbeat for ${data.goneAfterBeats} × ${w.heartbeatSeconds} s; forgotten at ${w.forgetAt}`}>
                  gone
                </Badge>
              ),
          },
          { key: "queues", header: "Queues", cell: (w) => w.queues.join(", ") },
          { key: "running", header: "Running", numeric: true, cell: (w) => `${w.running.length} / ${w.concurrency}` },
          { key: "started", header: "Started", cell: (w) => <RelativeTime iso={w.startedAt} /> },
          { key: "heartbeat", header: "Last heartbeat", cell: (w) => <RelativeTime iso={w.heartbeatAt} /> },
          { key: "version", header: "Version", cell: (w) => <code>{w.version}</code> },
        ]}
      />
      <h3>Running now</h3>
      <Table<RunningJobItem & { worker: string; workerState: string }>
        label={`Jobs running on the workers of ${service}`}
        rows={jobs}
        rowKey={(j) => `${j.worker}/${j.id}`}
        empty={<EmptyState title="Idle">No worker of {service} runs a job right now.</EmptyState>}
        columns={[
          {
            key: "job",
            header: "Job",
            cell: (j) => (
              <Link href={`/jobs?id=${encodeURIComponent(j.id)}`} aria-label={`job ${j.id}`}>
                <code>{j.id}</code>
              </Link>
            ),
          },
          { key: "task", header: "Task", cell: (j) => (j.task ? <code>{j.task}</code> : <span className="muted" title="finished since the worker's last heartbeat, or not readable here">—</span>) },
          { key: "worker", header: "Worker", cell: (j) => <code className="nowrap">{j.worker}</code> },
          { key: "queue", header: "Queue", cell: (j) => j.queue },
          { key: "progress", header: "Progress", cell: (j) => <Progress id={j.id} value={j.progress} /> },
          { key: "elapsed", header: "Elapsed", cell: (j) => (j.startedAt ? <Elapsed since={j.startedAt} /> : <span className="muted">—</span>) },
        ]}
      />
    </div>
  );
}

/** A percentage as a bar with its number; any other value (a small object) as its JSON. */
function Progress({ id, value }: { id: string; value: unknown }) {
  if (value === undefined || value === null) return <span className="muted">—</span>;
  if (typeof value === "number") {
    const percent = Math.max(0, Math.min(100, value));
    return (
      <span className="row nowrap">
        <progress max={100} value={percent} aria-label={`progress of job ${id}`} />
        <span>{Math.round(percent)} %</span>
      </span>
    );
  }
  const text = JSON.stringify(value);
  return <code title={text}>{text.length > 80 ? `${text.slice(0, 79)}…` : text}</code>;
}
