"use client";
import "@xyflow/react/dist/style.css";
import type { ContractEdge, ContractNode } from "@jfast/runtime/admin";
import {
  applyEdgeChanges,
  applyNodeChanges,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
  type NodeProps,
} from "@xyflow/react";
import { useCallback, useEffect, useMemo, useState } from "react";
import { Loading } from "./empty-state";
import { layoutGraph } from "./graph-layout";

export interface GraphEdge extends ContractEdge {
  services: string[];
}

export type GraphSelection = { kind: "edge" | "node"; id: string } | null;

const EDGE_COLOR = { publishes: "var(--info)", subscribes: "var(--ok)", depends: "var(--muted)", produces: "var(--info)", consumes: "var(--ok)" } as const;
/** Dashes tell the edge's kind apart without colour: depends-on, and Kafka (between services). */
const EDGE_DASH: Partial<Record<ContractEdge["kind"], string>> = { depends: "5 4", produces: "9 3 2 3", consumes: "9 3 2 3" };

type ContractNodeData = { label: string; kind: ContractNode["kind"]; bad: boolean };
type ServiceGroupData = { label: string };
/** A node of the graph; `service` puts it in that service's box (modules, local events); topics have none. */
export type GraphNodeIn = ContractNode & { service?: string | null };

function ContractNodeView({ data }: NodeProps<Node<ContractNodeData>>) {
  return (
    <div className={`graph-node graph-node-${data.kind}${data.bad ? " graph-node-bad" : ""}`} title={data.label}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      {data.label}
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

/** A service's box around its modules and local events. */
function ServiceGroupView({ data }: NodeProps<Node<ServiceGroupData>>) {
  return <div className="graph-group-label">{data.label}</div>;
}

const nodeTypes = { contract: ContractNodeView, service: ServiceGroupView };

/**
 * The contracts graph, laid out by ELK and drawn by React Flow: modules and events as nodes; publishes (blue),
 * subscribes (green) and depends-on (dashed) edges; violations in red. Every node and edge is a button: click
 * it, or Tab to it and press Enter, to select it.
 */
export function ContractsGraphView({ nodes, edges, onSelect }: { nodes: GraphNodeIn[]; edges: GraphEdge[]; onSelect: (selection: GraphSelection) => void }) {
  // Re-layout only when the shape of the graph changes, not on every refetch.
  const shape = useMemo(() => JSON.stringify([nodes.map((n) => n.id).sort(), edges.map((e) => `${e.id}:${e.violations.length}`).sort()]), [nodes, edges]);
  const [flowNodes, setFlowNodes] = useState<Node<ContractNodeData | ServiceGroupData>[] | null>(null);
  const [flowEdges, setFlowEdges] = useState<Edge[]>([]);
  const [layoutError, setLayoutError] = useState<string | null>(null);
  const [height, setHeight] = useState(360);

  useEffect(() => {
    let cancelled = false;
    const badNodes = new Set(edges.filter((e) => e.violations.length > 0).flatMap((e) => [e.from, e.to]));
    layoutGraph(nodes, edges)
      .then(({ positions, groups, height: laidOut }) => {
        if (cancelled) return;
        // Tall enough for the graph at full size, within reason; the controls zoom and fit for larger ones.
        setHeight(Math.min(680, Math.max(280, laidOut + 140)));
        // React Flow wants a group before the nodes inside it, whose positions are then relative to it.
        const boxes: Node<ServiceGroupData>[] = [...groups].map(([service, box]) => ({
          id: `service:${service}`,
          type: "service",
          position: { x: box.x, y: box.y },
          style: { width: box.width, height: box.height },
          className: "graph-group",
          data: { label: service },
          ariaRole: "group",
          ariaLabel: `service ${service}`,
          selectable: false,
          focusable: false,
          draggable: false,
          connectable: false,
          domAttributes: { "data-service-group": service } as never,
        }));
        setFlowNodes([
          ...boxes,
          ...nodes.map((n) => ({
            id: n.id,
            type: "contract",
            ...(n.service && groups.has(n.service) ? { parentId: `service:${n.service}` } : {}),
            position: positions.get(n.id) ?? { x: 0, y: 0 },
            data: { label: n.label, kind: n.kind, bad: badNodes.has(n.id) },
            ariaRole: "button",
            ariaLabel: `${n.kind} ${n.label}${n.service && groups.size ? ` in ${n.service}` : ""}${badNodes.has(n.id) ? " (violation)" : ""}`,
            draggable: false,
            connectable: false,
            domAttributes: { "data-node": n.id } as never,
          })),
        ]);
        setFlowEdges(
          edges.map((e) => {
            const bad = e.violations.length > 0;
            const color = bad ? "var(--bad)" : EDGE_COLOR[e.kind];
            return {
              id: e.id,
              source: e.from,
              target: e.to,
              ariaRole: "button",
              ariaLabel: `${e.kind}: ${bare(e.from)} to ${bare(e.to)}${bad ? " (violation)" : ""}`,
              style: { stroke: color, strokeWidth: bad ? 2.5 : 2, strokeDasharray: EDGE_DASH[e.kind] },
              markerEnd: { type: MarkerType.ArrowClosed, color, width: 18, height: 18 },
              animated: bad,
              interactionWidth: 14,
              domAttributes: { "data-edge": e.id, "data-kind": e.kind } as never,
            } satisfies Edge;
          }),
        );
        setLayoutError(null);
      })
      .catch((error: Error) => !cancelled && setLayoutError(error.message));
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `shape` stands for nodes and edges
  }, [shape]);

  const onNodesChange = useCallback(
    (changes: NodeChange<Node<ContractNodeData | ServiceGroupData>>[]) => {
      setFlowNodes((current) => (current ? applyNodeChanges(changes, current) : current));
      const picked = changes.find((c) => c.type === "select" && c.selected);
      if (picked && "id" in picked && !picked.id.startsWith("service:")) onSelect({ kind: "node", id: picked.id });
    },
    [onSelect],
  );
  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      setFlowEdges((current) => applyEdgeChanges(changes, current));
      const picked = changes.find((c) => c.type === "select" && c.selected);
      if (picked && "id" in picked) onSelect({ kind: "edge", id: picked.id });
    },
    [onSelect],
  );

  if (layoutError) return <p className="alert alert-bad" role="alert">Could not lay out the graph: {layoutError}</p>;
  if (!flowNodes) return <Loading what="the graph layout" />;
  return (
    <div className="graph" role="group" aria-label="Contracts graph" style={{ height }}>
      <ReactFlow
        nodes={flowNodes}
        edges={flowEdges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onEdgeClick={(_, edge) => onSelect({ kind: "edge", id: edge.id })}
        onNodeClick={(_, node) => node.type === "contract" && onSelect({ kind: "node", id: node.id })}
        onPaneClick={() => onSelect(null)}
        nodesConnectable={false}
        nodesDraggable={false}
        deleteKeyCode={null}
        fitView
        fitViewOptions={{ padding: 0.15 }}
        minZoom={0.2}
      >
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

function bare(id: string): string {
  return id.replace(/^(module|event|topic):/, "");
}
