import type { ContractEdge, ContractNode } from "@jfast/runtime/admin";

export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 34;

/**
 * Positions for the contracts graph from ELK's layered algorithm, left to right: publishers, then the events
 * they publish, then the modules subscribed to them (depends-on edges are layered the same way). ELK is loaded
 * on demand, so only the contracts page pays for it.
 */
export async function layoutGraph(nodes: ContractNode[], edges: ContractEdge[]): Promise<{ positions: Map<string, { x: number; y: number }>; height: number }> {
  const { default: ELK } = await import("elkjs/lib/elk.bundled.js");
  const elk = new ELK();
  const ids = new Set(nodes.map((n) => n.id));
  const result = await elk.layout({
    id: "contracts",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.layered.spacing.nodeNodeBetweenLayers": "90",
      "elk.spacing.nodeNode": "22",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    // Sorted so the same graph always gets the same picture, whatever order the services answered in.
    children: [...nodes].sort((a, b) => a.id.localeCompare(b.id)).map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: edges
      .filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to)
      .map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  });
  return { positions: new Map((result.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }])), height: Math.max(0, ...(result.children ?? []).map((c) => (c.y ?? 0) + (c.height ?? NODE_HEIGHT))) };
}
