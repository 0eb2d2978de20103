import { describe, expect, it } from "vitest";
import {
  assertCascadeShape,
  decodeRoutingKey,
  DEFAULT_CASCADE,
  delayUnits,
  highestLevel,
  holdPattern,
  levelsHolding,
  levelTtlMs,
  maxUnits,
  passPattern,
  planDelay,
  routingKey,
} from "./delay-key.js";

/** A topic-exchange matcher for the patterns the cascade binds (words and `*`, no `#`). */
function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split(".");
  const k = key.split(".");
  if (p.includes("#")) throw new Error("the cascade binds no # patterns");
  return p.length === k.length && p.every((word, i) => word === "*" || word === k[i]);
}

describe("delay cascade keys", () => {
  it("writes the delay in binary, most significant level first, one word per level", () => {
    expect(routingKey(13, 5)).toBe("0.1.1.0.1");
    expect(routingKey(0, 3)).toBe("0.0.0");
    expect(routingKey(7, 3)).toBe("1.1.1");
    expect(routingKey(1, 1)).toBe("1");
    expect(routingKey(15, 25).split(".")).toHaveLength(25);
    expect(routingKey(15, 25).endsWith("0.1.1.1.1")).toBe(true);
  });

  it("decodes what it encodes, for every value of a small cascade and samples of the large one", () => {
    for (let units = 0; units <= maxUnits(6); units++) expect(decodeRoutingKey(routingKey(units, 6))).toBe(units);
    for (const units of [0, 1, 2, 1000, 2 ** 24, maxUnits(25)]) expect(decodeRoutingKey(routingKey(units, 25))).toBe(units);
    expect(decodeRoutingKey("jfast.jobs")).toBeNull();
  });

  it("refuses units the cascade cannot hold", () => {
    expect(() => routingKey(8, 3)).toThrow(RangeError);
    expect(() => routingKey(-1, 3)).toThrow(RangeError);
    expect(() => routingKey(1.5, 3)).toThrow(RangeError);
  });

  it("rounds delays up to whole units, never down", () => {
    expect(delayUnits(1500, 100)).toBe(15);
    expect(delayUnits(1499, 100)).toBe(15);
    expect(delayUnits(1501, 100)).toBe(16);
    expect(delayUnits(1, 100)).toBe(1);
    expect(delayUnits(0, 100)).toBe(0);
    expect(delayUnits(-50, 100)).toBe(0);
    for (let ms = 1; ms < 5000; ms += 37) expect(delayUnits(ms, 100) * 100).toBeGreaterThanOrEqual(ms);
  });

  it("routes every key through exactly the levels whose bit is 1, and the waits add up to the delay", () => {
    const levels = 6;
    for (let units = 0; units <= maxUnits(levels); units++) {
      const key = routingKey(units, levels);
      // Walk the cascade as the broker does: start at the top exchange, hold or pass at each level.
      let waited = 0;
      const held: number[] = [];
      for (let level = levels - 1; level >= 0; level--) {
        const hold = topicMatches(holdPattern(level, levels), key);
        const pass = topicMatches(passPattern(level, levels), key);
        expect(hold !== pass).toBe(true);
        if (hold) {
          held.push(level);
          waited += 2 ** level;
        }
      }
      expect(waited).toBe(units);
      expect(held).toEqual(levelsHolding(units, levels));
    }
  });

  it("binds one word per level, so a key from a cascade of another shape matches nothing", () => {
    expect(holdPattern(0, 4)).toBe("*.*.*.1");
    expect(passPattern(0, 4)).toBe("*.*.*.0");
    expect(holdPattern(3, 4)).toBe("1.*.*.*");
    expect(passPattern(2, 25).split(".")).toHaveLength(25);
    expect(topicMatches(holdPattern(3, 4), routingKey(8, 4))).toBe(true);
    expect(topicMatches(holdPattern(3, 4), routingKey(8, 25))).toBe(false);
    expect(topicMatches(passPattern(3, 4), routingKey(8, 25))).toBe(false);
    expect(() => holdPattern(4, 4)).toThrow(RangeError);
  });

  it("doubles the TTL per level: 25 levels of 100 ms reach about 38 days", () => {
    expect(levelTtlMs(0, 100)).toBe(100);
    expect(levelTtlMs(1, 100)).toBe(200);
    expect(levelTtlMs(24, 100)).toBe(1_677_721_600);
    const days = (maxUnits(DEFAULT_CASCADE.levels) * DEFAULT_CASCADE.unitMs) / 86_400_000;
    expect(days).toBeGreaterThan(38);
    expect(days).toBeLessThan(39);
  });

  it("clamps a delay longer than the cascade to its maximum and flags it", () => {
    const shape = { unitMs: 100, levels: 4 };
    expect(planDelay(1500, shape)).toEqual({ units: 15, routingKey: "1.1.1.1", entryLevel: 3, overflow: false });
    expect(planDelay(1501, shape)).toEqual({ units: 15, routingKey: "1.1.1.1", entryLevel: 3, overflow: true });
    expect(planDelay(4000, shape).overflow).toBe(true);
    expect(planDelay(0, shape)).toEqual({ units: 0, routingKey: "0.0.0.0", entryLevel: 0, overflow: false });
  });

  it("enters the cascade at the highest bit set, where a message published at the top is first held", () => {
    expect(highestLevel(1)).toBe(0);
    expect(highestLevel(2)).toBe(1);
    expect(highestLevel(3)).toBe(1);
    expect(highestLevel(13)).toBe(3);
    expect(highestLevel(2 ** 24)).toBe(24);
    expect(highestLevel(maxUnits(25))).toBe(24);
    for (let units = 1; units <= maxUnits(8); units++) expect(highestLevel(units)).toBe(levelsHolding(units, 8)[0]);
    expect(planDelay(1000, DEFAULT_CASCADE)).toMatchObject({ units: 10, entryLevel: 3 });
  });

  it("rejects shapes RabbitMQ would refuse", () => {
    expect(() => assertCascadeShape(DEFAULT_CASCADE)).not.toThrow();
    expect(() => assertCascadeShape({ unitMs: 100, levels: 26 })).not.toThrow();
    expect(() => assertCascadeShape({ unitMs: 100, levels: 27 })).toThrow(/above RabbitMQ's limit/);
    expect(() => assertCascadeShape({ unitMs: 0, levels: 4 })).toThrow(RangeError);
    expect(() => assertCascadeShape({ unitMs: 100, levels: 0 })).toThrow(RangeError);
  });
});
