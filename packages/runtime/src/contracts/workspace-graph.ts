/**
 * The contracts graphs of several services as one: each service's modules and local events stay its own (a
 * group), and the Kafka topic nodes ("topic:<topic>/<type>") are shared, so a module of one service that
 * publishes an event type to a topic is joined to the modules of other services that handle it there. What
 * no single service can see is checked here: a handler for an event type, or a whole topic, that no service
 * of the workspace publishes. Pure: the CLI and the dashboard both call it.
 */
import { closest } from "./closest.js";

interface Violation {
  code: string;
  message: string;
  fix?: string;
}
interface NodeIn {
  id: string;
  kind: "module" | "event" | "topic";
  label: string;
}
interface EdgeIn {
  id: string;
  kind: "publishes" | "subscribes" | "depends" | "produces" | "consumes";
  from: string;
  to: string;
  declared?: boolean;
  labels?: string[];
  violations: Violation[];
}
/** One service's graph, as `contracts.graph` or `jfast contracts show --json` gives it. */
export interface ServiceContractsGraph {
  service: string;
  graph: { nodes: readonly NodeIn[]; edges: readonly EdgeIn[]; violations: readonly Violation[] };
}

export interface WorkspaceNode extends NodeIn {
  /** The service whose module or local event it is; null for a Kafka topic node, which services share. */
  service: string | null;
}
export interface WorkspaceEdge extends EdgeIn {
  /** The services whose graph has this edge. */
  services: string[];
}
export interface WorkspaceGraph {
  services: string[];
  nodes: WorkspaceNode[];
  edges: WorkspaceEdge[];
  /** Violations that belong to no edge, with the service that reported them. */
  violations: Array<{ service: string; violation: Violation }>;
}

export const WorkspaceRule = {
  /** A Kafka handler tells apart an event type that no service publishes to its topic. */
  orphanKafkaEvent: "orphan-kafka-event",
  /** A Kafka handler of a topic that no service publishes to at all. */
  orphanKafkaTopic: "orphan-kafka-topic",
} as const;

const ANY = "*";

export function mergeServiceGraphs(graphs: readonly ServiceContractsGraph[]): WorkspaceGraph {
  const nodes = new Map<string, WorkspaceNode>();
  const edges = new Map<string, WorkspaceEdge>();
  const violations: WorkspaceGraph["violations"] = [];
  const scoped = (service: string, id: string) => (id.startsWith("topic:") ? id : `${id.slice(0, id.indexOf(":"))}:${service}/${id.slice(id.indexOf(":") + 1)}`);

  for (const { service, graph } of graphs) {
    for (const n of graph.nodes) {
      const id = scoped(service, n.id);
      if (!nodes.has(id)) nodes.set(id, { ...n, id, service: n.kind === "topic" ? null : service });
    }
    for (const e of graph.edges) {
      const from = scoped(service, e.from);
      const to = scoped(service, e.to);
      const id = `${e.kind}:${from}->${to}`;
      const existing = edges.get(id);
      if (existing) existing.services.push(service);
      else edges.set(id, { ...e, id, from, to, violations: [...e.violations], services: [service] });
    }
    for (const violation of graph.violations) violations.push({ service, violation });
  }

  // Types published per topic, across every service.
  const published = new Map<string, Set<string>>();
  for (const e of edges.values()) {
    if (e.kind !== "produces") continue;
    const { topic, type } = topicOf(e.to);
    published.set(topic, (published.get(topic) ?? new Set()).add(type));
  }

  for (const e of [...edges.values()]) {
    if (e.kind !== "consumes") continue;
    const { topic, type } = topicOf(e.from);
    const types = published.get(topic);
    const [service] = e.services;
    const module = e.to.slice(e.to.indexOf("/") + 1);
    if (type === ANY) {
      if (!types) {
        e.violations.push({
          code: WorkspaceRule.orphanKafkaTopic,
          message: `${service}'s ${module} handles the Kafka topic "${topic}", which no service of the workspace publishes to`,
          fix: `publish to "${topic}" from the service that owns those facts (events.publish or outbox.publish), or check the topic's name`,
        });
        continue;
      }
      // A handler of every type on the topic is joined to each type published there.
      edges.delete(e.id);
      for (const t of types) {
        const from = `topic:${topic}/${t}`;
        const id = `consumes:${from}->${e.to}`;
        if (!edges.has(id)) edges.set(id, { ...e, id, from, labels: [...(e.labels ?? []), "any event"], violations: [...e.violations] });
      }
      continue;
    }
    if (types?.has(type)) continue;
    const near = types ? closest(type, [...types]) : null;
    e.violations.push({
      code: WorkspaceRule.orphanKafkaEvent,
      message: `${service}'s ${module} handles "${type}" on the Kafka topic "${topic}", which no service of the workspace publishes there`,
      fix: near
        ? `did you mean "${near}"? It is what "${topic}" carries`
        : `publish "${type}" to "${topic}" from the service that owns that fact, or drop the handler's case for it`,
    });
  }

  // A topic-wide node whose handler was joined to each published type is gone; drop nodes no edge reaches.
  const used = new Set([...edges.values()].flatMap((e) => [e.from, e.to]));
  for (const [id, n] of nodes) if (n.kind === "topic" && !used.has(id)) nodes.delete(id);
  return { services: graphs.map((g) => g.service), nodes: [...nodes.values()], edges: [...edges.values()], violations };
}

/** "topic:invoices/invoice.paid" → { topic: "invoices", type: "invoice.paid" }; a Kafka topic's name holds no "/". */
function topicOf(id: string): { topic: string; type: string } {
  const rest = id.slice("topic:".length);
  const slash = rest.indexOf("/");
  return { topic: rest.slice(0, slash), type: rest.slice(slash + 1) };
}
