import { describe, expect, it } from "vitest";
import { layoutFlow } from "./flow-layout";

const columns = (steps: Parameters<typeof layoutFlow>[0]) => Object.fromEntries(layoutFlow(steps).steps.map((s) => [s.name, s.column]));

describe("layoutFlow", () => {
  it("puts each step in the column of its longest path from a root", () => {
    expect(
      columns([
        { name: "charge", after: [] },
        { name: "reserve", after: [] },
        { name: "ship", after: ["charge", "reserve"] },
        { name: "notify", after: ["ship"] },
        // After a root and after notify: the longer path wins.
        { name: "archive", after: ["charge", "notify"] },
      ]),
    ).toEqual({ charge: 0, reserve: 0, ship: 1, notify: 2, archive: 3 });
  });

  it("draws one edge per `after`, pointing right, and orders a column by its parents' rows", () => {
    const layout = layoutFlow([
      { name: "b", after: [] },
      { name: "a", after: [] },
      { name: "from-b", after: ["b"] },
      { name: "from-a", after: ["a"] },
    ]);
    const at = Object.fromEntries(layout.steps.map((s) => [s.name, s]));
    expect([at.a!.row, at.b!.row]).toEqual([0, 1]);
    expect([at["from-a"]!.row, at["from-b"]!.row]).toEqual([0, 1]);
    expect(layout.edges.map((e) => `${e.from}>${e.to}`).sort()).toEqual(["a>from-a", "b>from-b"]);
    for (const step of layout.steps) expect(step.x + 168).toBeLessThanOrEqual(layout.width);
  });

  it("ignores an unknown parent and survives a cycle", () => {
    expect(columns([{ name: "x", after: ["gone"] }])).toEqual({ x: 0 });
    expect(Object.keys(columns([{ name: "p", after: ["q"] }, { name: "q", after: ["p"] }])).sort()).toEqual(["p", "q"]);
  });
});
