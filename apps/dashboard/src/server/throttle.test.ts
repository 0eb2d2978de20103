import { describe, expect, it } from "vitest";
import { FREE_FAILURES, lockedFor, recordFailure, recordSuccess } from "./throttle";

describe("sign-in throttling", () => {
  it("lets the first failures through, then locks the address out for twice as long each time, and forgets it on success", () => {
    const address = `203.0.113.${Math.floor(Math.random() * 200)}`;
    const now = 1_000_000;
    for (let i = 1; i <= FREE_FAILURES; i++) expect(recordFailure(address, now)).toEqual({ failures: i, lockMs: 0 });
    expect(lockedFor(address, now)).toBe(0);
    expect(recordFailure(address, now)).toEqual({ failures: FREE_FAILURES + 1, lockMs: 2000 });
    expect(lockedFor(address, now + 500)).toBe(1500);
    expect(recordFailure(address, now + 2000)).toEqual({ failures: FREE_FAILURES + 2, lockMs: 4000 });
    for (let i = 0; i < 20; i++) recordFailure(address, now + 3000);
    expect(lockedFor(address, now + 3000)).toBe(15 * 60_000);
    expect(lockedFor("198.51.100.1", now)).toBe(0);
    recordSuccess(address);
    expect(lockedFor(address, now + 3000)).toBe(0);
  });
});
