"use client";
import { mergeServiceGraphs, type ContractNode, type ContractViolation } from "@jfast/runtime/admin";
import { useQueries } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Card } from "~/components/card";
import { ContractsGraphView, type GraphEdge, type GraphSelection } from "~/components/contracts-graph";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { useServices, useTRPC } from "~/trpc/provider";

/**
 * The contracts of every watched service as one graph (mergeServiceGraphs): each service's modules in its own
 * box, and the Kafka topics between them, where a module of one service publishes an event type that modules
 * of another handle. A handler of what no watched service publishes is a violation, in red.
 */
export default function ContractsPage() {
  const services = useServices();
  const trpc = useTRPC();
  const queries = useQueries({ queries: services.map((s) => trpc(s).contracts.graph.queryOptions(undefined, { refetchInterval: 30_000 })) });
  const [selected, setSelected] = useState<GraphSelection>(null);
  const answered = services.flatMap((s, i) => {
    const graph = queries[i]?.data;
    return graph ? [{ service: s, graph }] : [];
  });
  const registryOnly = answered.filter((a) => a.graph.source === "registry").map((a) => a.service);
  const merged = mergeServiceGraphs(answered);
  const nodes = new Map(merged.nodes.map((n) => [n.id, n]));
  const edges = new Map<string, GraphEdge>(merged.edges.map((e) => [e.id, e]));
  const violations = merged.violations;
  const kafka = merged.nodes.some((n) => n.kind === "topic");
  const edge = selected?.kind === "edge" ? edges.get(selected.id) : undefined;
  const node = selected?.kind === "node" ? nodes.get(selected.id) : undefined;
  return (
    <>
      <h1>Contracts</h1>
      <div className="stack">
        {services.map((s, i) => (queries[i]?.isError ? <ErrorState key={s} title={`${s}:`} error={queries[i]?.error} /> : null))}
        {registryOnly.length ? (
          <p className="alert alert-info" role="status">
            {registryOnly.join(", ")}: only the subscriptions its tasks declare are shown; publishers and dependencies come from <code>contracts.toml</code> when the contracts checker runs in the service.
          </p>
        ) : null}
        {queries.some((q) => q.isPending) ? (
          <Loading what="contracts" />
        ) : nodes.size === 0 ? (
          <EmptyState title="No contracts yet">No module of these services declares tasks, events or dependencies.</EmptyState>
        ) : (
          <>
            <div className="legend" aria-hidden="true">
              <span style={{ color: "var(--info)" }}>publishes</span>
              <span style={{ color: "var(--ok)" }}>subscribes</span>
              <span style={{ color: "var(--muted)" }}>depends on</span>
              {kafka ? <span>dash-dot: over Kafka, between services</span> : null}
              <span style={{ color: "var(--bad)" }}>violation</span>
            </div>
            <ContractsGraphView nodes={[...nodes.values()]} edges={[...edges.values()]} onSelect={setSelected} />
            {edge ? (
              <Card title="Edge" label="edge detail">
                <p data-edge-detail={edge.id}>
                  <code>{edge.from.replace(/^\w+:/, "")}</code> <Badge tone="info">{edge.kind}</Badge> <code>{edge.to.replace(/^\w+:/, "")}</code> · seen in {edge.services.join(", ")}
                </p>
                {edge.violations.map((v) => (
                  <Finding key={v.code + v.message} violation={v} />
                ))}
              </Card>
            ) : node ? (
              <NodeDetail node={node} edges={[...edges.values()].filter((e) => e.from === node.id || e.to === node.id)} />
            ) : (
              <p className="muted">Select a module, an event or an edge (click it, or Tab to it and press Enter) to see its connections and what the checker says.</p>
            )}
            {violations.map(({ service, violation }) => (
              <p key={service + violation.code + violation.message} className="alert alert-bad"><Badge tone="bad">{violation.code}</Badge> {service}: {violation.message}</p>
            ))}
          </>
        )}
      </div>
    </>
  );
}

function NodeDetail({ node, edges }: { node: ContractNode & { service: string | null }; edges: GraphEdge[] }) {
  const bad = edges.flatMap((e) => e.violations);
  return (
    <Card title={`${node.kind === "module" ? "Module" : node.kind === "topic" ? "Kafka event" : "Event"} ${node.label}${node.service ? ` (${node.service})` : ""}`} label="node detail">
      <ul data-node-detail={node.id}>
        {edges.map((e) => (
          <li key={e.id}>
            <code>{e.from.replace(/^\w+:/, "")}</code> <Badge tone={e.violations.length ? "bad" : "info"}>{e.kind}</Badge> <code>{e.to.replace(/^\w+:/, "")}</code>
            <span className="muted"> · {e.services.join(", ")}</span>
          </li>
        ))}
      </ul>
      {edges.length === 0 ? <p className="muted">No edges: nothing publishes, subscribes or depends here.</p> : null}
      {bad.map((v) => (
        <Finding key={v.code + v.message} violation={v} />
      ))}
    </Card>
  );
}

/** A checker finding: its rule, what it saw, and the change that makes it go away. */
function Finding({ violation }: { violation: ContractViolation }) {
  return (
    <div className="stack" style={{ gap: 2 }}>
      <p className="error-text"><Badge tone="bad">{violation.code}</Badge> {violation.message}</p>
      {violation.fix ? <p className="muted">fix: {violation.fix}</p> : null}
    </div>
  );
}
