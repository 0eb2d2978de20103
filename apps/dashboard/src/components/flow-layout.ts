/** A step as the flow graph needs it: its name and the steps it runs after. */
export interface FlowNodeIn {
  name: string;
  after: readonly string[];
}

export interface PlacedStep {
  name: string;
  /** The longest path from a root (a step after nothing) to this step: roots are column 0. */
  column: number;
  row: number;
  x: number;
  y: number;
}

export interface FlowLayout {
  steps: PlacedStep[];
  /** One per `after` entry: parent → child, from the parent's right edge to the child's left edge. */
  edges: { from: string; to: string; path: string }[];
  width: number;
  height: number;
}

export const STEP_WIDTH = 168;
export const STEP_HEIGHT = 52;
const COLUMN_GAP = 64;
const ROW_GAP = 20;
const MARGIN = 12;

/**
 * Lays a flow out by depth, left to right: a step's column is the longest path to it from a root, so every edge
 * points right. In a column, steps follow the average row of their parents (fewer crossings), then their names, so
 * the same flow always gets the same picture. A parent missing from the steps is ignored; a flow has no cycle
 * (refused when it is written), and a cycle here would only put its steps in column 0.
 */
export function layoutFlow(steps: readonly FlowNodeIn[]): FlowLayout {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const columnOf = (name: string): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    if (visiting.has(name)) return 0;
    visiting.add(name);
    const parents = (byName.get(name)?.after ?? []).filter((p) => byName.has(p));
    const column = parents.length === 0 ? 0 : Math.max(...parents.map(columnOf)) + 1;
    visiting.delete(name);
    depth.set(name, column);
    return column;
  };
  const columns: string[][] = [];
  for (const step of steps) (columns[columnOf(step.name)] ??= []).push(step.name);

  const rowOf = new Map<string, number>();
  const placed: PlacedStep[] = [];
  columns.forEach((names, column) => {
    const weight = (name: string): number => {
      const rows = (byName.get(name)?.after ?? []).map((p) => rowOf.get(p)).filter((r): r is number => r !== undefined);
      return rows.length === 0 ? 0 : rows.reduce((a, b) => a + b, 0) / rows.length;
    };
    const ordered = [...(names ?? [])].sort((a, b) => weight(a) - weight(b) || a.localeCompare(b));
    ordered.forEach((name, row) => {
      rowOf.set(name, row);
      placed.push({ name, column, row, x: MARGIN + column * (STEP_WIDTH + COLUMN_GAP), y: MARGIN + row * (STEP_HEIGHT + ROW_GAP) });
    });
  });

  const at = new Map(placed.map((p) => [p.name, p]));
  const edges: FlowLayout["edges"] = [];
  for (const step of steps) {
    const to = at.get(step.name)!;
    for (const parent of step.after) {
      const from = at.get(parent);
      if (!from) continue;
      const [x1, y1, x2, y2] = [from.x + STEP_WIDTH, from.y + STEP_HEIGHT / 2, to.x, to.y + STEP_HEIGHT / 2];
      const bend = (x2 - x1) / 2;
      edges.push({ from: parent, to: step.name, path: `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2 - 6} ${y2}` });
    }
  }
  const rows = Math.max(1, ...columns.map((c) => c?.length ?? 0));
  return {
    steps: placed,
    edges,
    width: MARGIN * 2 + Math.max(1, columns.length) * STEP_WIDTH + Math.max(0, columns.length - 1) * COLUMN_GAP,
    height: MARGIN * 2 + rows * STEP_HEIGHT + (rows - 1) * ROW_GAP,
  };
}
