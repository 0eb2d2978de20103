import type { TaskRegistry } from "../core/registry.js";
import { contractsGraph } from "../contracts/inspect.js";
import { graphFromRegistry } from "./registry-graph.js";
import type { ContractsGraph, ContractsSource } from "./sources.js";

/** Reading contracts.toml and the module sources costs a directory walk: reuse the answer for a while. */
const CACHE_MS = 10_000;

/**
 * The graph `jfast contracts show --json` prints, for this service's root. A service whose tasks are not in
 * modules/ (declared in code) gets the graph its registry reveals instead; a broken contracts.toml is shown
 * as a violation rather than hiding the graph.
 */
export function contractsSourceFor(params: { root: string; registry: TaskRegistry }): ContractsSource {
  let cached: { at: number; graph: Promise<ContractsGraph> } | null = null;
  async function read(): Promise<ContractsGraph> {
    try {
      const graph = await contractsGraph(params.root);
      if (graph.nodes.length === 0) return graphFromRegistry(params.registry);
      return {
        source: "contracts",
        nodes: graph.nodes.map((n) => ({ id: n.id, kind: n.kind, label: n.label })),
        edges: graph.edges.map((e) => ({
          id: e.id,
          kind: e.kind,
          from: e.from,
          to: e.to,
          declared: e.declared,
          labels: e.labels,
          violations: e.violations.map((v) => ({ code: v.code, message: v.message, fix: v.fix })),
        })),
        violations: graph.violations.map((v) => ({ code: v.code, message: v.message, fix: v.fix })),
      };
    } catch (error) {
      const fallback = graphFromRegistry(params.registry);
      return { ...fallback, violations: [{ code: "contracts-file", message: (error as Error).message.split("\n")[0]! }] };
    }
  }
  return {
    graph() {
      const now = Date.now();
      if (!cached || now - cached.at > CACHE_MS) cached = { at: now, graph: read() };
      return cached.graph;
    },
  };
}
