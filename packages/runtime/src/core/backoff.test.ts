import { describe, expect, it } from "vitest";
import { backoffDelayMs, MAX_BACKOFF_MS } from "./backoff.js";

describe("backoffDelayMs", () => {
  it("doubles per attempt from the base", () => {
    expect(backoffDelayMs(1, { baseMs: 1000, jitter: false })).toBe(1000);
    expect(backoffDelayMs(2, { baseMs: 1000, jitter: false })).toBe(2000);
    expect(backoffDelayMs(4, { baseMs: 1000, jitter: false })).toBe(8000);
  });
  it("is capped at five minutes, jitter included", () => {
    for (let attempt = 1; attempt < 60; attempt++) {
      expect(backoffDelayMs(attempt, { baseMs: 1000 })).toBeLessThanOrEqual(MAX_BACKOFF_MS);
    }
    expect(backoffDelayMs(30, { baseMs: 1000, jitter: false })).toBe(MAX_BACKOFF_MS);
  });
  it("keeps jitter within ten percent", () => {
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelayMs(3, { baseMs: 1000 });
      expect(delay).toBeGreaterThanOrEqual(3600);
      expect(delay).toBeLessThanOrEqual(4400);
    }
  });
});
