import { describe, expect, it } from "vitest";
import { extractTotalCents, ReceiptUnreadable } from "./extract-total.js";

describe("extractTotalCents", () => {
  it("reads totals with currency signs, thousands separators and cents", () => {
    expect(extractTotalCents("Coffee 3.50\nTOTAL: $1,234.50")).toBe(123_450);
    expect(extractTotalCents("total 12")).toBe(1_200);
  });

  it("refuses text without a total, so the job fails visibly", () => {
    expect(() => extractTotalCents("thank you for shopping")).toThrow(ReceiptUnreadable);
  });
});
