import { readFile } from "node:fs/promises";
import path from "node:path";
import type { TaskRegistry } from "../core/registry.js";
import { contractsGraph } from "../contracts/inspect.js";
import { contractsStamp } from "../contracts/scan-modules.js";
import { graphFromRegistry } from "./registry-graph.js";
import type { ContractsGraph, ContractsSource } from "./sources.js";

/**
 * Parsing the module sources with TypeScript costs hundreds of milliseconds: the graph is kept while the files'
 * sizes and change times stay the same, and those are looked at again at most once per STAMP_MS.
 */
const STAMP_MS = 2_000;

/**
 * The graph `jfast contracts show --json` prints, for this service's root. A service whose tasks are not in
 * modules/ (declared in code) gets the graph its registry reveals instead; a broken contracts.toml is shown
 * as a violation rather than hiding the graph.
 */
export function contractsSourceFor(params: { root: string; registry: TaskRegistry }): ContractsSource {
  let cached: { checkedAt: number; stamp: string; graph: Promise<ContractsGraph> } | null = null;
  async function read(): Promise<ContractsGraph> {
    try {
      const graph = (await builtGraph(params.root)) ?? (await contractsGraph(params.root));
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
      // A production install without TypeScript (docs/getting-started.md#production-install-size) cannot parse
      // the sources: what the registry reveals is shown, as for a service without modules/, not a violation.
      if ((error as { code?: unknown }).code === "DRIVER_MISSING") return graphFromRegistry(params.registry);
      const fallback = graphFromRegistry(params.registry);
      return { ...fallback, violations: [{ code: "contracts-file", message: (error as Error).message.split("\n")[0]! }] };
    }
  }
  return {
    async graph() {
      const now = Date.now();
      if (cached && now - cached.checkedAt < STAMP_MS) return cached.graph;
      const stamp = await contractsStamp(params.root);
      if (cached?.stamp === stamp) {
        cached.checkedAt = now;
        return cached.graph;
      }
      cached = { checkedAt: now, stamp, graph: read() };
      return cached.graph;
    },
  };
}

/** The file `jfast build` writes beside contracts.toml in a compiled layout (docs/getting-started.md#compiled). */
export const BUILT_GRAPH_FILE = "contracts.graph.json";

/**
 * A compiled layout's graph, made by `jfast build` from the source tree: the same graph the sources give, read
 * without parsing the compiled files (and without TypeScript installed). Null when the root has none.
 */
async function builtGraph(root: string): Promise<Awaited<ReturnType<typeof contractsGraph>> | null> {
  let text: string;
  try {
    text = await readFile(path.join(root, BUILT_GRAPH_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const parsed = JSON.parse(text) as { format?: unknown; graph?: Awaited<ReturnType<typeof contractsGraph>> };
  if (parsed.format !== 1 || !parsed.graph) throw new Error(`${BUILT_GRAPH_FILE} was not written by this version of jfast build: build again`);
  return parsed.graph;
}
