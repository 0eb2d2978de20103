"use client";
import type { ContractEdge, ContractNode } from "@jfast/runtime/admin";

export interface GraphEdge extends ContractEdge {
  services: string[];
}

const WIDTH = 880;
const ROW = 46;
const NODE_W = 230;
const NODE_H = 30;
const LEFT_X = 150;
const RIGHT_X = WIDTH - 150;
const EDGE_COLOR = { publishes: "var(--info)", subscribes: "var(--ok)", depends: "var(--muted)" } as const;

/**
 * Modules on the left, events on the right; publishes and subscribes run between the columns, depends-on arcs
 * bend out to the left. Events are ordered by the average row of the modules they touch so lines cross less.
 */
export function ContractsGraphView({ nodes, edges, selected, onSelect }: { nodes: ContractNode[]; edges: GraphEdge[]; selected: string | null; onSelect: (edgeId: string) => void }) {
  const modules = nodes.filter((n) => n.kind === "module").sort((a, b) => a.label.localeCompare(b.label));
  const moduleRow = new Map(modules.map((m, i) => [m.id, i]));
  const events = nodes
    .filter((n) => n.kind === "event")
    .map((event) => {
      const rows = edges.filter((e) => e.from === event.id || e.to === event.id).map((e) => moduleRow.get(e.from === event.id ? e.to : e.from) ?? 0);
      return { event, weight: rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0 };
    })
    .sort((a, b) => a.weight - b.weight || a.event.label.localeCompare(b.event.label))
    .map((e) => e.event);
  const position = new Map<string, { x: number; y: number }>();
  modules.forEach((m, i) => position.set(m.id, { x: LEFT_X, y: 30 + i * ROW }));
  events.forEach((e, i) => position.set(e.id, { x: RIGHT_X, y: 30 + i * ROW }));
  const height = Math.max(modules.length, events.length) * ROW + 30;

  return (
    <svg className="graph" viewBox={`0 0 ${WIDTH} ${height}`} role="group" aria-label="Contracts graph">
      <defs>
        {Object.entries(EDGE_COLOR).map(([kind, color]) => (
          <marker key={kind} id={`arrow-${kind}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill={color} />
          </marker>
        ))}
        <marker id="arrow-violation" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" fill="var(--bad)" />
        </marker>
      </defs>
      {edges.map((edge) => {
        const from = position.get(edge.from);
        const to = position.get(edge.to);
        if (!from || !to) return null;
        const bad = edge.violations.length > 0;
        const color = bad ? "var(--bad)" : EDGE_COLOR[edge.kind];
        let d: string;
        if (edge.kind === "depends") {
          const x = LEFT_X - NODE_W / 2;
          const bend = x - 30 - Math.abs(to.y - from.y) / 4;
          d = `M ${x} ${from.y} C ${bend} ${from.y}, ${bend} ${to.y}, ${x} ${to.y}`;
        } else {
          const x1 = from.x + (from.x < to.x ? NODE_W / 2 : -NODE_W / 2);
          const x2 = to.x + (from.x < to.x ? -NODE_W / 2 : NODE_W / 2);
          const mid = (x1 + x2) / 2;
          // Publishes bow up and subscribes bow down, so a module that does both between the same rows shows two lines.
          const bow = edge.kind === "publishes" ? -16 : 16;
          d = `M ${x1} ${from.y} C ${mid} ${from.y + bow}, ${mid} ${to.y + bow}, ${x2} ${to.y}`;
        }
        return (
          <g key={edge.id} data-edge={edge.id} data-kind={edge.kind} style={{ cursor: "pointer" }} onClick={() => onSelect(edge.id)} tabIndex={0} role="button" aria-label={`${edge.kind}: ${label(edge.from)} to ${label(edge.to)}${bad ? " (violation)" : ""}`} onKeyDown={(e) => (e.key === "Enter" || e.key === " ") && onSelect(edge.id)}>
            <path d={d} fill="none" stroke="transparent" strokeWidth={12} />
            <path d={d} fill="none" stroke={color} strokeWidth={selected === edge.id ? 3.5 : 2} strokeDasharray={edge.kind === "depends" ? "5 4" : undefined} markerEnd={`url(#arrow-${bad ? "violation" : edge.kind})`} />
          </g>
        );
      })}
      {[...modules, ...events].map((node) => {
        const p = position.get(node.id)!;
        return (
          <g key={node.id} data-node={node.id}>
            <rect x={p.x - NODE_W / 2} y={p.y - NODE_H / 2} width={NODE_W} height={NODE_H} rx={node.kind === "event" ? 15 : 6} fill={node.kind === "event" ? "var(--info-bg)" : "var(--surface-2)"} stroke="var(--border)" />
            <text x={p.x} y={p.y + 4} textAnchor="middle">{node.label}</text>
          </g>
        );
      })}
    </svg>
  );
}

function label(id: string): string {
  return id.replace(/^(module|event):/, "");
}
