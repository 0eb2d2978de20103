import { describe, expect, it } from "vitest";
import { bookCarrier, EXPRESS_FROM_CENTS } from "./carrier.js";

describe("bookCarrier", () => {
  it("sends valuable parcels express and the rest standard", () => {
    expect(bookCarrier(EXPRESS_FROM_CENTS).carrier).toBe("express");
    expect(bookCarrier(EXPRESS_FROM_CENTS - 1).carrier).toBe("standard");
  });

  it("gives each booking its own tracking code, prefixed by the carrier", () => {
    const a = bookCarrier(4200);
    const b = bookCarrier(4200);
    expect(a.trackingCode).toMatch(/^STD-[0-9A-F]{10}$/);
    expect(a.trackingCode).not.toBe(b.trackingCode);
  });
});
