import { describe, expect, it } from "vitest";
import { defineTask } from "./define-task.js";
import { describeLimitWait, limitsOf, StartWindow } from "./limits.js";

describe("task limits", () => {
  it("takes positive whole numbers and refuses anything else, naming the task and the docs", () => {
    expect(() => defineTask("billing.charge", { concurrency: 5, rateLimit: { max: 10, perMs: 1000 } }, () => undefined)).not.toThrow();
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => defineTask("billing.charge", { concurrency }, () => undefined)).toThrow(/task\("billing.charge"\): concurrency must be a positive whole number.*jfast docs tasks#limits/);
    }
    for (const rateLimit of [{ max: 0, perMs: 1000 }, { max: 10, perMs: 0.5 }, { max: 10 } as never, null as never]) {
      expect(() => defineTask("mail.send", { rateLimit }, () => undefined)).toThrow(/task\("mail.send"\): rateLimit must be \{ max, perMs \}/);
    }
  });

  it("keeps only the tasks that have a limit", () => {
    const tasks = [defineTask("a.one", { concurrency: 2 }, () => undefined), defineTask("a.two", () => undefined), defineTask("a.three", { rateLimit: { max: 1, perMs: 10 } }, () => undefined)];
    expect([...limitsOf(tasks)]).toEqual([
      ["a.one", { concurrency: 2, rateLimit: null }],
      ["a.three", { concurrency: null, rateLimit: { max: 1, perMs: 10 } }],
    ]);
  });

  it("says what a waiting job waits on, or null when no limit is reached", () => {
    const limits = { concurrency: 5, rateLimit: { max: 10, perMs: 1000 } };
    expect(describeLimitWait("billing.charge", limits, { running: 5, startedInWindow: 3 })).toBe("concurrency 5 of billing.charge: 5 running");
    expect(describeLimitWait("billing.charge", limits, { running: 1, startedInWindow: 10 })).toBe("rate limit 10 per 1000 ms of billing.charge: 10 started in the window");
    expect(describeLimitWait("billing.charge", limits, { running: 4, startedInWindow: 9 })).toBeNull();
  });

  it("counts starts in a sliding window", () => {
    const window = new StartWindow({ max: 2, perMs: 100 });
    window.add(0);
    window.add(50);
    expect(window.room(60)).toBe(0);
    expect(window.nextAt(60)).toBe(100);
    expect(window.room(100)).toBe(1);
    expect(window.room(150)).toBe(2);
  });
});
