import { findingKey, graphEdgeId, type ContractsDiff, type ContractsSide } from "./diff.js";
import type { ContractFinding, GraphEdge, GraphNode } from "./types.js";

const STYLE = {
  added: "stroke:#1a7f37,stroke-width:3px",
  removed: "stroke:#8c959f,stroke-width:1px",
  violation: "stroke:#cf222e,stroke-width:3px",
} as const;

/**
 * A Mermaid flowchart of the part of the graph a change touches: the edges added (thick, green) and removed
 * (dotted, grey), the edges and modules with new violations (red), and around every event touched, its
 * other publishers and subscribers for context. Null when nothing changed.
 */
export function renderDiffMermaid(params: { base: ContractsSide; head: ContractsSide; diff: ContractsDiff }): string | null {
  const { base, head, diff } = params;
  const added = new Set(diff.added.map(graphEdgeId));
  const removed = new Set(diff.removed.map(graphEdgeId));
  const newOnEdge = violationsByEdge(head.graph.edges, diff.newViolations);
  const fixedOnEdge = violationsByEdge(base.graph.edges, diff.fixedViolations);
  const onEdges = new Set([...newOnEdge.values(), ...fixedOnEdge.values()].flat().map(findingKey));
  const flaggedModules = new Set(diff.newViolations.filter((f) => !onEdges.has(findingKey(f))).map((f) => `module:${f.module}`));

  const affected = new Set<string>(flaggedModules);
  const touch = (e: GraphEdge) => {
    affected.add(e.from);
    affected.add(e.to);
  };
  for (const e of head.graph.edges) if (added.has(e.id) || newOnEdge.has(e.id) || fixedOnEdge.has(e.id)) touch(e);
  for (const e of base.graph.edges) if (removed.has(e.id) || fixedOnEdge.has(e.id)) touch(e);
  if (affected.size === 0) return null;

  const drawn = [
    ...head.graph.edges.filter(
      (e) =>
        added.has(e.id) ||
        newOnEdge.has(e.id) ||
        fixedOnEdge.has(e.id) ||
        (affected.has(e.from) && affected.has(e.to)) ||
        [e.from, e.to].some((n) => n.startsWith("event:") && affected.has(n)),
    ),
    ...base.graph.edges.filter((e) => removed.has(e.id)),
  ];
  const headNodes = new Map(head.graph.nodes.map((n) => [n.id, n]));
  const baseNodes = new Map(base.graph.nodes.map((n) => [n.id, n]));
  const ids = new Map<string, string>();
  const lines = ["flowchart LR"];
  const node = (id: string) => {
    if (!ids.has(id)) {
      const key = `n${ids.size}`;
      ids.set(id, key);
      const n: GraphNode = headNodes.get(id) ?? baseNodes.get(id) ?? { id, kind: id.startsWith("event:") ? "event" : id.startsWith("topic:") ? "topic" : "module", label: id.slice(id.indexOf(":") + 1) };
      const label = `"${n.label.replace(/"/g, "#quot;")}"`;
      const cls = flaggedModules.has(id) ? ":::violation" : !headNodes.has(id) ? ":::removed" : !baseNodes.has(id) ? ":::added" : "";
      lines.push(`  ${key}${n.kind === "event" ? `([${label}])` : n.kind === "topic" ? `[/${label}/]` : `[${label}]`}${cls}`);
    }
    return ids.get(id)!;
  };
  for (const id of [...affected].sort()) node(id);

  const styles: Record<keyof typeof STYLE, number[]> = { added: [], removed: [], violation: [] };
  drawn.forEach((e, index) => {
    const isRemoved = removed.has(e.id);
    const fresh = isRemoved ? [] : (newOnEdge.get(e.id) ?? []);
    const words = [
      e.kind === "depends" ? "depends on" : null,
      added.has(e.id) ? "added" : null,
      isRemoved ? "removed" : null,
      ...fresh.map((f) => f.rule),
      ...(isRemoved ? [] : (fixedOnEdge.get(e.id) ?? []).map((f) => `fixed ${f.rule}`)),
    ].filter((w): w is string => w !== null);
    const arrow = isRemoved ? "-.->" : added.has(e.id) ? "==>" : "-->";
    lines.push(`  ${node(e.from)} ${arrow}${words.length ? `|${words.join(", ")}|` : ""} ${node(e.to)}`);
    if (fresh.length) styles.violation.push(index);
    else if (added.has(e.id)) styles.added.push(index);
    else if (isRemoved) styles.removed.push(index);
  });
  for (const [kind, indexes] of Object.entries(styles)) {
    if (indexes.length) lines.push(`  linkStyle ${indexes.join(",")} ${STYLE[kind as keyof typeof STYLE]}`);
  }
  lines.push(
    "  classDef violation fill:#ffebe9,stroke:#cf222e,stroke-width:2px",
    "  classDef added fill:#dafbe1,stroke:#1a7f37",
    "  classDef removed fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:4 3",
  );
  return lines.join("\n");
}

/** The findings that sit on each graph edge: the graph keeps a violation's rule and message on its edge. */
function violationsByEdge(edges: readonly GraphEdge[], findings: readonly ContractFinding[]): Map<string, ContractFinding[]> {
  const out = new Map<string, ContractFinding[]>();
  for (const e of edges) {
    const on = findings.filter((f) => e.violations.some((v) => v.code === f.rule && v.message === f.message));
    if (on.length) out.set(e.id, on);
  }
  return out;
}
