import type { ContractEdge, ContractNode } from "@jfast/runtime/admin";

export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 34;
/** Room above a service group's modules for its name. */
const GROUP_HEADER = 30;

export interface LaidOut {
  /** Top-left of each node: relative to its service group for a grouped node, else to the graph. */
  positions: Map<string, { x: number; y: number }>;
  /** Each service group's box, by service name. */
  groups: Map<string, { x: number; y: number; width: number; height: number }>;
  height: number;
}

/**
 * Positions for the contracts graph from ELK's layered algorithm, left to right: publishers, then the events
 * they publish, then the modules subscribed to them (depends-on edges are layered the same way). Nodes with a
 * `service` are laid out inside that service's box; Kafka topic nodes, which services share, sit between the
 * boxes. ELK is loaded on demand, so only the contracts page pays for it, and only for a graph it has not laid out
 * before in this browser: its answers are kept (localStorage, the last few shapes) and a reload reuses them.
 */
type ElkResult = Awaited<ReturnType<InstanceType<typeof import("elkjs/lib/elk.bundled.js").default>["layout"]>>;

async function elk() {
  const { default: ELK } = await import("elkjs/lib/elk.bundled.js");
  return new ELK();
}

const STORE = "jfast.contracts-layouts";
const KEEP = 5;

/** ELK's answer for this exact input, if this browser laid it out before. */
function remembered(key: string): ElkResult | null {
  try {
    const entries = JSON.parse(localStorage.getItem(STORE) ?? "[]") as Array<[string, ElkResult]>;
    return entries.find(([k]) => k === key)?.[1] ?? null;
  } catch {
    return null;
  }
}

function remember(key: string, result: ElkResult): ElkResult {
  try {
    const entries = (JSON.parse(localStorage.getItem(STORE) ?? "[]") as Array<[string, ElkResult]>).filter(([k]) => k !== key);
    localStorage.setItem(STORE, JSON.stringify([[key, result], ...entries].slice(0, KEEP)));
  } catch {
    // Storage full or disabled: lay it out again next time.
  }
  return result;
}

export async function layoutGraph(nodes: Array<ContractNode & { service?: string | null }>, edges: ContractEdge[]): Promise<LaidOut> {
  const ids = new Set(nodes.map((n) => n.id));
  // Sorted so the same graph always gets the same picture, whatever order the services answered in.
  const sorted = [...nodes].sort((a, b) => a.id.localeCompare(b.id));
  const leaf = (n: ContractNode) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT });
  const services = [...new Set(sorted.map((n) => n.service).filter((s): s is string => typeof s === "string"))].sort();
  const grouped = services.length > 1;
  const children = grouped
    ? [
        ...services.map((service) => ({
          id: `service:${service}`,
          layoutOptions: { "elk.padding": `[top=${GROUP_HEADER + 12},left=14,bottom=14,right=14]` },
          children: sorted.filter((n) => n.service === service).map(leaf),
        })),
        ...sorted.filter((n) => !n.service).map(leaf),
      ]
    : sorted.map(leaf);
  const graph = {
    id: "contracts",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.layered.spacing.nodeNodeBetweenLayers": "90",
      "elk.spacing.nodeNode": "22",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    children,
    edges: edges
      .filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to)
      .map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
  const key = JSON.stringify(graph);
  const result = remembered(key) ?? remember(key, await (await elk()).layout(graph));
  const positions = new Map<string, { x: number; y: number }>();
  const groups = new Map<string, { x: number; y: number; width: number; height: number }>();
  let height = 0;
  for (const c of result.children ?? []) {
    const box = { x: c.x ?? 0, y: c.y ?? 0, width: c.width ?? NODE_WIDTH, height: c.height ?? NODE_HEIGHT };
    height = Math.max(height, box.y + box.height);
    if (c.id.startsWith("service:") && grouped) {
      groups.set(c.id.slice("service:".length), box);
      for (const inner of c.children ?? []) positions.set(inner.id, { x: inner.x ?? 0, y: inner.y ?? 0 });
    } else {
      positions.set(c.id, { x: box.x, y: box.y });
    }
  }
  return { positions, groups, height };
}
