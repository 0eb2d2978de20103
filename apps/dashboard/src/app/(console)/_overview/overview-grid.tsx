"use client";
import type { OverviewData as OverviewView } from "~/trpc/types";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Badge, statusTone } from "~/components/badge";
import { Card, Stat } from "~/components/card";
import { EmptyState } from "~/components/empty-state";
import { EstimatedCount } from "~/components/estimated-count";
import { ThroughputChart } from "~/components/stats-charts";
import { isMissingProcedure } from "~/trpc/errors";
import { useRoles } from "~/trpc/hooks";
import { usePerson, useServiceTRPC, useServices } from "~/trpc/provider";
import { QueueLatency } from "./queue-latency";
import { THROUGHPUT_MINUTES } from "./throughput";
import { WorkersOnline } from "./workers-online";

export interface InitialOverview {
  service: string;
  data: OverviewView | null;
  error: string | null;
}

export function OverviewGrid({ initial }: { initial: InitialOverview[] }) {
  const services = useServices();
  if (services.length === 0) {
    return (
      <EmptyState title="No services configured">
        Set <code>JFAST_DASHBOARD_SERVICES</code> to a JSON list of <code>{"{ name, url, token }"}</code> and restart the dashboard.
      </EmptyState>
    );
  }
  return (
    <div className="grid">
      {services.map((service) => (
        <ServiceCard key={service} service={service} initial={initial.find((i) => i.service === service)} />
      ))}
    </div>
  );
}

function ServiceCard({ service, initial }: { service: string; initial: InitialOverview | undefined }) {
  const trpc = useServiceTRPC(service);
  const query = useQuery(trpc.overview.get.queryOptions(undefined, initial?.data ? { initialData: initial.data } : {}));
  const data = query.data;
  // A service that stopped answering shows as down, even if an older answer is still cached.
  const down = query.isError || (!data && initial?.error);
  const error = query.error?.message ?? initial?.error ?? null;
  return (
    <Card
      label={`service ${service}`}
      title={service}
      actions={
        <>
          {data?.queue.enabled ? <Badge tone="info">{data.queue.backend}</Badge> : null}
          <RoleBadges service={service} />
          <Badge tone={down ? "bad" : statusTone(data?.readiness.status)}>{down ? "down" : (data?.readiness.status ?? "…")}</Badge>
        </>
      }
    >
      {down ? (
        <p className="alert alert-bad" role="alert">
          {error}
        </p>
      ) : null}
      {data ? <ServiceBody service={service} data={data} /> : !down ? <p className="muted">Loading…</p> : null}
    </Card>
  );
}

/**
 * The signed-in person's role in the dashboard; beside it the token's role, labelled as such, where the dashboard's
 * token on this service allows less than the person may do (a viewer token: nothing can be changed there).
 */
function RoleBadges({ service }: { service: string }) {
  const person = usePerson();
  const token = useRoles([service])[service];
  return (
    <>
      <Badge tone="neutral" title={`your role in this dashboard, signed in as ${person.name}`}>
        <span data-person-role={person.role}>{person.role}</span>
      </Badge>
      {token === "viewer" && person.role !== "viewer" ? (
        <Badge tone="warn" title={`the dashboard's token on ${service} is a viewer token: nothing can be changed on this service, whatever your role`}>
          <span data-token-role="viewer">token: viewer</span>
        </Badge>
      ) : null}
    </>
  );
}

function ServiceBody({ service, data }: { service: string; data: OverviewView }) {
  const checks = Object.entries(data.readiness.checks);
  return (
    <div className="stack">
      {data.queue.enabled && data.queue.depths ? (
        <div className="stats">
          <Stat label="Ready" value={<EstimatedCount n={data.queue.depths.ready} estimated={data.queue.depths.estimated} />} />
          <Stat label="Scheduled" value={<EstimatedCount n={data.queue.depths.scheduled} estimated={data.queue.depths.estimated} />} />
          <Stat label="Running" value={data.queue.depths.running} />
          <Stat label="Dead" value={data.queue.depths.dead} bad={data.queue.depths.dead > 0} />
        </div>
      ) : (
        <p className="muted">{data.queue.enabled ? `Queue unreachable: ${data.queue.error}` : "This service does not run a queue."}</p>
      )}
      <div className="row">
        {checks.map(([name, check]) => (
          <Badge key={name} tone={statusTone(check.status)} title={typeof check.reason === "string" ? check.reason : undefined}>
            {name}: {check.status}
          </Badge>
        ))}
      </div>
      {data.queue.enabled ? <WorkersOnline service={service} /> : null}
      {data.queue.enabled && data.queue.queues ? <QueueLatency service={service} queues={data.queue.queues} /> : null}
      {data.queue.enabled ? <Throughput service={service} /> : null}
      <Extras service={service} plugins={data.plugins} />
      <div className="row muted">
        <span>{data.tasks.length} task{data.tasks.length === 1 ? "" : "s"}</span>·<span>{data.environment}</span>·<span>plugins: {data.plugins.join(", ") || "none"}</span>
      </div>
      {data.queue.enabled && data.queue.depths && data.queue.depths.dead > 0 ? (
        <Link href={`/dead-letters?service=${encodeURIComponent(service)}`}>Inspect {data.queue.depths.dead} dead letter{data.queue.depths.dead === 1 ? "" : "s"} →</Link>
      ) : null}
    </div>
  );
}


/** Jobs completed, failed and dead per minute over the last hour, with axes (stored by the service, so it survives restarts). */
function Throughput({ service }: { service: string }) {
  const trpc = useServiceTRPC(service);
  const query = useQuery(trpc.overview.throughput.queryOptions({ minutes: THROUGHPUT_MINUTES }));
  if (query.isPending) return <p className="muted">Loading throughput…</p>;
  if (query.isError) return isMissingProcedure(query.error) ? <p className="muted">No throughput history: this service's runtime does not record it yet.</p> : <p className="muted">Throughput unavailable: {query.error.message}</p>;
  if (!query.data.enabled) return <p className="muted">No throughput history: this service records none (no queue worker reports to it).</p>;
  const points = query.data.points.map((p) => ({ at: p.minute, completed: p.processed, failed: p.failed, dead: p.dead }));
  return <ThroughputChart points={points} span="minute" label={`Last ${THROUGHPUT_MINUTES} minutes`} height={150} />;
}

/** Outbox backlog and the next scheduled tick, on the services that run them. */
function Extras({ service, plugins }: { service: string; plugins: string[] }) {
  const trpc = useServiceTRPC(service);
  const outbox = useQuery(trpc.outbox.status.queryOptions(undefined, { enabled: plugins.includes("outbox") }));
  const schedules = useQuery(trpc.schedules.list.queryOptions({ count: 1 }));
  const list = schedules.data?.schedules ?? [];
  const next = list.flatMap((s) => s.nextTicks.slice(0, 1).map((tick) => ({ tick, name: s.name }))).sort((a, b) => a.tick.localeCompare(b.tick))[0];
  const late = list.filter((s) => s.late).length;
  const missed = list.reduce((n, s) => n + s.missedTicks, 0);
  if (!outbox.data?.enabled && !schedules.data?.enabled) return null;
  const show = (n: number | null) => (n === null ? <span className="muted" title="not reported by this service's outbox">—</span> : n);
  return (
    <div className="stack" style={{ gap: 8 }}>
      {outbox.data?.enabled ? (
        <div className="stats" style={{ gridTemplateColumns: "repeat(3, 1fr)" }} aria-label={`outbox of ${service}`} role="group">
          <Stat label="Outbox pending" value={show(outbox.data.pending)} />
          <Stat label="Outbox lag (s)" value={show(outbox.data.lagSeconds)} />
          <Stat label="Outbox failing" value={show(outbox.data.failing)} bad={(outbox.data.failing ?? 0) > 0} />
        </div>
      ) : null}
      {schedules.data?.enabled ? (
        <div className="row muted">
          {next ? <>next tick: <code>{next.name}</code> at {next.tick.replace(".000Z", "Z")}</> : "scheduler on, no schedules"}
          {late ? <Badge tone="warn">{late} late</Badge> : null}
          {missed ? <Badge tone="bad">{missed} missed in 24 h</Badge> : null}
        </div>
      ) : null}
    </div>
  );
}

