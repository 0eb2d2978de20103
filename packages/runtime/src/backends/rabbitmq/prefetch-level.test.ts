import { describe, expect, it } from "vitest";
import { LOWER_AFTER_MS, PrefetchLevel } from "./prefetch-level.js";

describe("rabbitmq: the consuming channel's prefetch level", () => {
  it("is raised at once", () => {
    const level = new PrefetchLevel();
    expect(level.want(10, 0)).toBe(true);
    expect(level.value).toBe(10);
    expect(level.want(1010, 5)).toBe(true);
    expect(level.value).toBe(1010);
    expect(level.want(1010, 6)).toBe(false);
  });

  it("rides out a dip shorter than LOWER_AFTER_MS, and a level only a little lower", () => {
    const level = new PrefetchLevel();
    level.want(1010, 0);
    // A pause of the process: a few low samples, then the rate is back.
    expect(level.want(190, 10)).toBe(false);
    expect(level.want(40, 30)).toBe(false);
    expect(level.want(1010, 60)).toBe(false);
    // Low again later: the earlier dip does not count towards the delay.
    expect(level.want(300, LOWER_AFTER_MS - 10)).toBe(false);
    expect(level.want(300, LOWER_AFTER_MS + 100)).toBe(false);
    // Within a quarter of the level: never lowered, however long.
    expect(level.want(800, 3 * LOWER_AFTER_MS)).toBe(false);
    expect(level.want(800, 10 * LOWER_AFTER_MS)).toBe(false);
    expect(level.value).toBe(1010);
  });

  it("is lowered once the wanted level stayed well below for LOWER_AFTER_MS, to the highest wanted meanwhile", () => {
    const level = new PrefetchLevel();
    level.want(1010, 0);
    expect(level.want(12, 100)).toBe(false);
    expect(level.want(200, 400)).toBe(false);
    expect(level.want(11, 900)).toBe(false);
    expect(level.want(11, 100 + LOWER_AFTER_MS)).toBe(true);
    expect(level.value).toBe(200);
    // From there the same rules: the slow jobs' level is reached a second later.
    expect(level.want(11, 200 + LOWER_AFTER_MS)).toBe(false);
    expect(level.want(11, 200 + 2 * LOWER_AFTER_MS)).toBe(true);
    expect(level.value).toBe(11);
  });
});
