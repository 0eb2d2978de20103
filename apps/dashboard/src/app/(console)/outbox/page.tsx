"use client";
import { useQueries } from "@tanstack/react-query";
import { Badge, statusTone } from "~/components/badge";
import { Card, Stat } from "~/components/card";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { useMayAct, useRoles } from "~/trpc/hooks";
import { useServices, useTRPC } from "~/trpc/provider";
import { DeadOutboxRows } from "./dead-rows";

export default function OutboxPage() {
  const services = useServices();
  const trpc = useTRPC();
  const queries = useQueries({ queries: services.map((s) => trpc(s).outbox.status.queryOptions()) });
  const roles = useRoles(services);
  const may = useMayAct();
  const show = (n: number | null) => (n === null ? <span className="muted" title="not reported by this service's outbox">—</span> : n);
  return (
    <>
      <h1>Outbox</h1>
      <div className="stack">
        <div className="grid">
          {services.map((s, i) => {
            const q = queries[i]!;
            return (
              <Card key={s} title={s} label={`outbox of ${s}`} actions={q.data?.enabled ? <Badge tone={statusTone(q.data.status)}>{q.data.status}</Badge> : null}>
                {q.isPending ? <Loading what="the outbox" /> : q.isError ? <ErrorState title="Unreachable:" error={q.error} /> : !q.data.enabled ? (
                  <EmptyState title="No outbox">This service does not enable the outbox plugin.</EmptyState>
                ) : (
                  <div className="stats" style={{ gridTemplateColumns: "repeat(4, 1fr)" }}>
                    <Stat label="Pending" value={show(q.data.pending)} />
                    <Stat label="Lag (s)" value={show(q.data.lagSeconds)} />
                    <Stat label="Failing" value={show(q.data.failing)} bad={(q.data.failing ?? 0) > 0} />
                    <Stat label="Dead" value={show(deadCount(q.data.detail))} bad={(deadCount(q.data.detail) ?? 0) > 0} />
                  </div>
                )}
              </Card>
            );
          })}
        </div>
        {services.map((s, i) =>
          queries[i]?.data?.enabled ? (
            <Card key={s} title={`Dead rows of ${s}`} label={`dead outbox rows of ${s}`}>
              <DeadOutboxRows service={s} readOnly={roles[s] !== "operator"} hidden={!may.act} />
            </Card>
          ) : null,
        )}
      </div>
    </>
  );
}

/** The dead rows the outbox's health check counts (`detail.dead`), when it reports them. */
function deadCount(detail: Record<string, unknown>): number | null {
  return typeof detail.dead === "number" ? detail.dead : null;
}
