import type { PayloadSchemaChange } from "./payload-diff.js";
import type { ContractFinding, ContractsGraph, GraphEdge } from "./types.js";

/**
 * One edge of the contracts graph as `jfast contracts diff` reports it: publishes (module → event type),
 * subscribes (event type → module), depends_on (module → module), produces (module → "<topic>/<type>" on
 * Kafka), consumes ("<topic>/<type>" → module).
 */
export interface ContractEdge {
  kind: "publishes" | "subscribes" | "depends_on" | "produces" | "consumes";
  from: string;
  to: string;
}

/** What a change does to a service's contracts: `jfast contracts diff --json`. */
export interface ContractsDiff {
  added: ContractEdge[];
  removed: ContractEdge[];
  newViolations: ContractFinding[];
  fixedViolations: ContractFinding[];
  /**
   * Each task's payload schema change, breaking first (`jfast contracts diff` fills it in; docs/contracts.md#payload-schemas).
   * Absent when the schemas were not compared; `payloadsNotCompared` then says why.
   */
  payloads?: PayloadSchemaChange[];
  payloadsNotCompared?: string;
}

/** One side of the comparison: what `inspectContracts` returns, or any graph with its findings. */
export interface ContractsSide {
  graph: ContractsGraph;
  findings: readonly ContractFinding[];
}

const KIND_ORDER: readonly ContractEdge["kind"][] = ["publishes", "subscribes", "depends_on", "produces", "consumes"];

/**
 * Edges that appear or disappear between `base` and `head`, and findings that are new or gone. An edge is the
 * same edge on both sides whether contracts.toml declares it or only the code does it: a change of that kind
 * shows as a violation appearing or going away. A finding is the same finding when its rule, module and
 * subject match, so a line moving in an edited file does not count as fixing one violation and adding another.
 */
export function diffContracts(base: ContractsSide, head: ContractsSide): ContractsDiff {
  const before = new Map(base.graph.edges.map((e) => [e.id, toContractEdge(e)]));
  const after = new Map(head.graph.edges.map((e) => [e.id, toContractEdge(e)]));
  const baseFindings = new Set(base.findings.map(findingKey));
  const headFindings = new Set(head.findings.map(findingKey));
  return {
    added: [...after].filter(([id]) => !before.has(id)).map(([, e]) => e).sort(compareEdges),
    removed: [...before].filter(([id]) => !after.has(id)).map(([, e]) => e).sort(compareEdges),
    newViolations: head.findings.filter((f) => !baseFindings.has(findingKey(f))),
    fixedViolations: base.findings.filter((f) => !headFindings.has(findingKey(f))),
  };
}

export function isEmptyDiff(diff: ContractsDiff): boolean {
  return diff.added.length + diff.removed.length + diff.newViolations.length + diff.fixedViolations.length + (diff.payloads?.length ?? 0) === 0;
}

/** The graph's edge ("subscribes", "event:x", "module:y") in the diff's words ("subscribes", "x", "y"). */
export function toContractEdge(edge: GraphEdge): ContractEdge {
  return { kind: edge.kind === "depends" ? "depends_on" : edge.kind, from: unprefix(edge.from), to: unprefix(edge.to) };
}

/** The graph edge id a diff edge stands for: "subscribes:event:x->module:y". */
export function graphEdgeId(edge: ContractEdge): string {
  const kind = edge.kind === "depends_on" ? "depends" : edge.kind;
  const from = edge.kind === "subscribes" ? `event:${edge.from}` : edge.kind === "consumes" ? `topic:${edge.from}` : `module:${edge.from}`;
  const to = edge.kind === "publishes" ? `event:${edge.to}` : edge.kind === "produces" ? `topic:${edge.to}` : `module:${edge.to}`;
  return `${kind}:${from}->${to}`;
}

export function findingKey(finding: ContractFinding): string {
  return `${finding.rule}|${finding.module}|${finding.subject}`;
}

function unprefix(node: string): string {
  return node.slice(node.indexOf(":") + 1);
}

function compareEdges(a: ContractEdge, b: ContractEdge): number {
  return KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || compare(a.from, b.from) || compare(a.to, b.to);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
