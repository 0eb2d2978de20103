import { describe, expect, it } from "vitest";
import { defineTask } from "./define-task.js";
import { describeLimitWait, limitKeyOf, limitsOf, StartWindow } from "./limits.js";

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

describe("limits per key", () => {
  const job = { id: "j1", task: "shop.sync", tenantId: "acme", payload: { customerId: "c-7" } };

  it("reads concurrency: { key, limit } as a limit per key, and refuses a bad key function or limit", () => {
    const keyed = defineTask("shop.sync", { concurrency: { key: (p: { customerId: string }) => p.customerId, limit: 2 } }, () => undefined);
    expect(limitsOf([keyed]).get("shop.sync")).toEqual({ concurrency: 2, rateLimit: null, perKey: true });
    expect(limitKeyOf(keyed.options as never, job)).toBe("c-7");
    expect(() => defineTask("shop.sync", { concurrency: { key: "customerId", limit: 2 } as never }, () => undefined)).toThrow(/concurrency must be a number, or \{ key, limit \}.*flow-control#per-key-concurrency/);
    expect(() => defineTask("shop.sync", { concurrency: { key: () => "k", limit: 0 } }, () => undefined)).toThrow(/concurrency must be a number, or \{ key, limit \}/);
    expect(() => limitKeyOf({ concurrency: { key: () => "", limit: 1 } }, job)).toThrow(/concurrency.key\(payload\) must return a non-empty string/);
  });

  it("keys a fair task by tenant unless it gives a key, keeps a task-wide concurrency beside it, and checks weights", () => {
    const byTenant = defineTask("reports.build", { fairness: "tenant", concurrency: 4 }, () => undefined);
    expect(limitsOf([byTenant]).get("reports.build")).toEqual({ concurrency: 4, rateLimit: null, fair: { weights: {} } });
    expect(limitKeyOf(byTenant.options as never, job)).toBe("acme");
    expect(limitKeyOf(byTenant.options as never, { ...job, tenantId: null })).toBe("");
    const weighted = defineTask("reports.build", { fairness: { key: (p: { customerId: string }) => p.customerId, weights: { "c-7": 3 } } }, () => undefined);
    expect(limitsOf([weighted]).get("reports.build")).toEqual({ concurrency: null, rateLimit: null, fair: { weights: { "c-7": 3 } } });
    expect(limitKeyOf(weighted.options as never, job)).toBe("c-7");
    for (const fairness of ["customer", { weights: { a: 0 } }, { weights: { a: 1.5 } }, { key: "tenant" }]) {
      expect(() => defineTask("reports.build", { fairness: fairness as never }, () => undefined)).toThrow(/fairness must be "tenant" or \{ key\?, weights\? \}.*flow-control#fair-share-across-keys/);
    }
  });

  it("reads rateLimit: { key, max, perMs } as a rate per key, and allows one key function per task", () => {
    const rated = defineTask("api.call", { rateLimit: { key: (p: { customerId: string }) => p.customerId, max: 5, perMs: 1000 } }, () => undefined);
    expect(limitsOf([rated]).get("api.call")).toEqual({ concurrency: null, rateLimit: null, keyRate: { max: 5, perMs: 1000 } });
    expect(limitKeyOf(rated.options as never, job)).toBe("c-7");
    expect(() =>
      defineTask("api.call", { concurrency: { key: () => "a", limit: 1 }, rateLimit: { key: () => "b", max: 1, perMs: 1000 } }, () => undefined),
    ).toThrow(/a task's jobs have one key: give `key` to only one of concurrency, rateLimit and fairness/);
  });

  it("reads orderedBy and onDead as order per key, and refuses onDead alone or orderedBy with fairness", () => {
    const ordered = defineTask("ledger.apply", { orderedBy: (p: { accountId: string }) => p.accountId }, () => undefined);
    expect(limitsOf([ordered]).get("ledger.apply")).toEqual({ concurrency: null, rateLimit: null, ordered: { onDead: "block" } });
    expect(limitKeyOf(ordered.options as never, { ...job, payload: { accountId: "acc-1" } })).toBe("acc-1");
    expect(() => defineTask("ledger.apply", { onDead: "skip" }, () => undefined)).toThrow(/onDead goes with orderedBy/);
    expect(() => defineTask("ledger.apply", { orderedBy: () => "a", onDead: "drop" as never }, () => undefined)).toThrow(/onDead must be "block"/);
    expect(() => defineTask("ledger.apply", { orderedBy: () => "a", fairness: "tenant" }, () => undefined)).toThrow(/does not combine with fairness/);
  });
});
