import { describe, expect, it } from "vitest";
import { timeTicks } from "./stats-charts";

const minutes = (n: number) => Array.from({ length: n }, (_, i) => ({ at: new Date(Date.UTC(2026, 11, 6, 0, i)).toISOString() }));

describe("timeTicks", () => {
  it("labels every point of a short history", () => {
    const points = minutes(5);
    expect(timeTicks(points)).toEqual(points.map((p) => p.at));
  });

  it("labels a day of minutes at 8 evenly spaced points from the oldest", () => {
    const points = minutes(1440);
    const ticks = timeTicks(points);
    expect(ticks).toHaveLength(8);
    expect(ticks[0]).toBe(points[0]!.at);
    expect(ticks.map((t) => points.findIndex((p) => p.at === t))).toEqual([0, 180, 360, 540, 720, 900, 1080, 1260]);
  });

  it("never labels more than 8 points, whatever the length", () => {
    for (const n of [9, 60, 61, 168, 1439]) expect(timeTicks(minutes(n)).length).toBeLessThanOrEqual(8);
  });
});
