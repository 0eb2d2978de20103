import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { errorToAttempt, Job } from "../core/job.js";
import { errorGroup, normaliseMessage, SCAN_BUDGET, SCAN_PAGE_MAX, scanDead } from "./dead-scan.js";

/** 12 000 dead letters, newest first; one in a thousand is of task scan.rare. */
async function deadLetters() {
  const backend = createMemoryBackend();
  const jobs = Array.from({ length: 12_000 }, (_, i) => new Job({ task: i % 1000 === 7 ? "scan.rare" : "scan.common", payload: { i }, maxAttempts: 1 }));
  await backend.enqueue({ jobs });
  const claimed = await backend.claim({ workerId: "w", limit: jobs.length, leaseMs: 60_000 });
  for (const job of claimed) await backend.kill({ workerId: "w", job, error: errorToAttempt(new Error("boom"), 1) });
  const all = await backend.listDead({ limit: jobs.length });
  return { backend, all };
}

describe("scanDead with a filter", () => {
  it("finds what filtering every dead letter finds, within the budget, and continues from its offset", async () => {
    const { backend, all } = await deadLetters();
    const rare = all.filter((d) => d.job.task === "scan.rare").map((d) => d.job.id);
    const calls: number[] = [];
    const listDead = backend.listDead.bind(backend);
    backend.listDead = (params) => {
      calls.push(params.limit);
      return listDead(params);
    };

    const first = await scanDead(backend, { filter: { task: "scan.rare" }, offset: 0, want: 100 });
    expect(first.budgetReached).toBe(true);
    expect(first.scanned).toBe(SCAN_BUDGET);
    expect(first.nextOffset).toBe(SCAN_BUDGET);
    expect(first.rows.map((d) => d.job.id)).toEqual(all.slice(0, SCAN_BUDGET).filter((d) => d.job.task === "scan.rare").map((d) => d.job.id));
    // Pages grow (up to SCAN_PAGE_MAX, so one page of big dead letters stays small), so the budget takes a
    // handful of round trips rather than twenty.
    expect(calls.length).toBeLessThanOrEqual(7);
    expect(Math.max(...calls)).toBeLessThanOrEqual(SCAN_PAGE_MAX);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(SCAN_BUDGET);

    const rest = await scanDead(backend, { filter: { task: "scan.rare" }, offset: first.nextOffset!, want: 100 });
    expect(rest.budgetReached).toBe(false);
    expect(rest.nextOffset).toBeNull();
    expect([...first.rows, ...rest.rows].map((d) => d.job.id)).toEqual(rare);
  });

  it("stops at `want` matches mid-page and resumes right after the last one", async () => {
    const { backend, all } = await deadLetters();
    const common = all.filter((d) => d.job.task === "scan.common").map((d) => d.job.id);
    const pages: string[] = [];
    let offset: number | null = 0;
    while (offset !== null && pages.length < 3_000) {
      const page = await scanDead(backend, { filter: { task: "scan.common" }, offset, want: 700 });
      pages.push(...page.rows.map((d) => d.job.id));
      offset = page.nextOffset;
    }
    expect(pages).toEqual(common.slice(0, pages.length));
    expect(pages.length).toBeGreaterThanOrEqual(2_100);
  });
});

describe("error groups of long messages", () => {
  it("groups a 100 000-character message by its beginning, without reading the rest through the patterns", () => {
    // An unknown task's message repeats the task's name; this one has an address-like run the e-mail pattern
    // would scan from every position.
    const long = `no task named "${"a.b".repeat(20_000)}" ${"x".repeat(40_000)}@`;
    const other = `${long.slice(0, 600)}${"y".repeat(50_000)}`;
    const group = errorGroup({ attempt: 1, at: "2026-01-01T00:00:00.000Z", class: "UnknownTask", message: long });
    expect(group.message).toBe(long.slice(0, 300));
    expect(errorGroup({ attempt: 1, at: "2026-01-01T00:00:00.000Z", class: "UnknownTask", message: other }).key).toBe(group.key);
  });

  it("still reads only the first line", () => {
    expect(normaliseMessage("card 4242 declined\nat charge (billing.ts:12)")).toBe("card <n> declined");
  });
});
