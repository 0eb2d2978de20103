import { describe, expect, it } from "vitest";
import { storedResult } from "./result.js";

describe("storedResult", () => {
  it("stores nothing for a handler that returned nothing", () => {
    expect(storedResult(undefined, 10)).toBeUndefined();
  });
  it("stores a value's JSON form, null included", () => {
    expect(storedResult({ charged: 12, at: new Date(0) }, 1000)).toEqual({ value: { charged: 12, at: "1970-01-01T00:00:00.000Z" } });
    expect(storedResult(null, 10)).toEqual({ value: null });
    expect(storedResult("ok", 4)).toEqual({ value: "ok" });
  });
  it("counts UTF-8 bytes, not characters", () => {
    // "ééé" as JSON is 2 quotes + 3 × 2 bytes = 8 bytes in 5 characters.
    expect(storedResult("ééé", 8)).toEqual({ value: "ééé" });
    const omitted = storedResult("ééé", 7);
    expect(omitted).toEqual({ omitted: expect.stringContaining("8 bytes") });
    expect(omitted).toEqual({ omitted: expect.stringContaining("[plugin.queue] max_result_bytes (7)") });
  });
  it("says why a value with no JSON form is not stored", () => {
    expect(storedResult(10n, 100)).toEqual({ omitted: expect.stringContaining("not JSON") });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(storedResult(cycle, 100)).toEqual({ omitted: expect.stringContaining("not JSON") });
    expect(storedResult(() => 1, 100)).toEqual({ omitted: expect.stringContaining("not JSON") });
  });
});
