import type { TaskRegistry } from "../core/registry.js";
import type { ContractEdge, ContractNode, ContractsGraph } from "./sources.js";

/** Local subscribers are tasks named `<event type>-><module>.<function>`. */
const SUBSCRIBER = /^(?<event>[a-z0-9_.]+)->(?<module>[a-z0-9_]+)\./;

/**
 * The part of the contract graph a running service can tell on its own: its modules (owners of its tasks) and
 * which events each module subscribes to. Publishers and declared dependencies live in contracts.toml and come
 * from the contracts checker when it is wired in; this graph does not guess them.
 */
export function graphFromRegistry(registry: TaskRegistry): ContractsGraph {
  const nodes = new Map<string, ContractNode>();
  const edges = new Map<string, ContractEdge>();
  for (const definition of registry.all()) {
    const subscriber = SUBSCRIBER.exec(definition.name);
    const module = definition.module ?? subscriber?.groups?.module ?? definition.name.split(".")[0]!;
    const moduleId = `module:${module}`;
    if (!nodes.has(moduleId)) nodes.set(moduleId, { id: moduleId, kind: "module", label: module });
    const event = subscriber?.groups?.event;
    if (event) {
      const eventId = `event:${event}`;
      if (!nodes.has(eventId)) nodes.set(eventId, { id: eventId, kind: "event", label: event });
      const edgeId = `subscribes:${eventId}->${moduleId}`;
      edges.set(edgeId, { id: edgeId, kind: "subscribes", from: eventId, to: moduleId, violations: [] });
    }
  }
  return { source: "registry", nodes: [...nodes.values()], edges: [...edges.values()], violations: [] };
}
