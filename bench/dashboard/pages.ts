/**
 * The dashboard's pages as the benchmark loads them: how to reach each one, the selector that shows its main
 * data is on screen, and the admin procedures the page calls (timed directly against the service).
 */
import type { Page } from "playwright-core";

export interface PageContext {
  service: string;
  /** A dead letter's id (for the detail drawer and the search by id). */
  deadId: string;
  /** A customer.id value that some dead letters carry. */
  customerId: string;
}

export interface Call {
  procedure: string;
  input?: unknown;
  /**
   * Time the calls this far apart: overview.get reads depths from a readiness check shared for a second, so calls
   * in a row would time the cache; the dashboard's live stream asks every 2 seconds and pays for the count.
   */
  apartMs?: number;
}

export interface PageCase {
  name: string;
  /** Where the clock starts: "navigation" (page.goto) or "click" (a drawer opened on a loaded page). */
  from: "navigation" | "click";
  /** What is waited for, in words, for the report. */
  waitsFor: string;
  calls: Call[];
  /** Loads the page and resolves once its data is visible; returns the milliseconds measured. */
  load(page: Page, ctx: PageContext): Promise<number>;
}

const VISIBLE = { state: "visible" as const, timeout: 60_000 };

async function timed(page: Page, url: string, ready: (page: Page) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await page.goto(url, { waitUntil: "commit" });
  await ready(page);
  return performance.now() - t0;
}

export const PAGES: PageCase[] = [
  {
    name: "Overview",
    from: "navigation",
    waitsFor: "the dead count on the service's card and the throughput sparkline",
    calls: [{ procedure: "overview.get", apartMs: 1100 }, { procedure: "overview.throughput", input: { minutes: 60 } }, { procedure: "schedules.list", input: { count: 1 } }, { procedure: "outbox.status" }],
    load: (page, ctx) =>
      timed(page, "/", async (p) => {
        const card = p.getByRole("region", { name: `service ${ctx.service}` });
        await card.locator('[data-stat="Dead"] .stat-value').filter({ hasText: /\d/ }).waitFor(VISIBLE);
        await card.locator("figure[data-throughput]").waitFor(VISIBLE);
      }),
  },
  {
    name: "Queues",
    from: "navigation",
    waitsFor: "the row of billing.charge with its counts",
    calls: [{ procedure: "queues.list" }],
    load: (page, ctx) => timed(page, "/queues", (p) => p.getByRole("table", { name: `Queues of ${ctx.service}` }).locator('tr[data-row="billing.charge"]').waitFor(VISIBLE)),
  },
  {
    name: "Dead letters (first 100)",
    from: "navigation",
    waitsFor: "the 100th row of the table",
    calls: [{ procedure: "deadLetters.list", input: { limit: 100, filter: {} } }, { procedure: "deadLetters.replays" }, { procedure: "overview.whoami" }],
    load: (page, ctx) =>
      timed(page, `/dead-letters?service=${ctx.service}`, (p) => p.getByRole("table", { name: "Dead letters" }).locator("tbody tr:nth-child(100)").waitFor(VISIBLE)),
  },
  {
    name: "Dead letters grouped by error",
    from: "navigation",
    waitsFor: "the groups table (the view is clicked as soon as it can be)",
    calls: [{ procedure: "deadLetters.groups", input: { filter: {} } }],
    load: (page, ctx) =>
      timed(page, `/dead-letters?service=${ctx.service}`, async (p) => {
        await p.getByRole("button", { name: "Grouped by error" }).click({ timeout: 60_000 });
        await p.getByRole("table", { name: "Error groups" }).locator("tbody tr").first().waitFor(VISIBLE);
      }),
  },
  {
    name: "Dead letter detail drawer",
    from: "click",
    waitsFor: "the drawer's attempts (from the click on Details, the table already loaded)",
    calls: [{ procedure: "jobs.get", input: { id: "$deadId" } }],
    async load(page, ctx) {
      await page.goto(`/dead-letters?service=${ctx.service}`);
      const row = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr").first();
      await row.waitFor(VISIBLE);
      const t0 = performance.now();
      await row.getByRole("button", { name: /^Details / }).click();
      await page.getByRole("dialog").locator(".attempt").first().waitFor(VISIBLE);
      return performance.now() - t0;
    },
  },
  {
    name: "Jobs: search by payload field",
    from: "navigation",
    waitsFor: "the rows found (customer.id = one customer's id), the form filled and sent once it renders",
    calls: [{ procedure: "jobs.search", input: { payload: { path: "customer.id", equals: "$customerId" }, limit: 50 } }],
    load: (page, ctx) =>
      timed(page, "/jobs", async (p) => {
        const form = p.getByRole("search", { name: "Find jobs" });
        await form.getByLabel("Payload field").fill("customer.id", { timeout: 60_000 });
        await form.getByLabel("equals").fill(ctx.customerId);
        await form.getByRole("button", { name: "Find" }).click();
        await p.getByRole("table", { name: `Jobs found on ${ctx.service}` }).locator("tbody tr").first().waitFor(VISIBLE);
      }),
  },
  {
    name: "Jobs: search by id",
    from: "navigation",
    waitsFor: "the job's row (/jobs?id=…)",
    calls: [{ procedure: "jobs.search", input: { id: "$deadId", limit: 50 } }],
    load: (page, ctx) => timed(page, `/jobs?id=${ctx.deadId}`, (p) => p.locator(`tr[data-row="${ctx.deadId}"]`).waitFor(VISIBLE)),
  },
  {
    name: "Schedules",
    from: "navigation",
    waitsFor: "the nightly schedule's row with its next ticks",
    calls: [{ procedure: "schedules.list", input: { count: 3 } }],
    load: (page, ctx) => timed(page, "/schedules", (p) => p.getByRole("table", { name: `Schedules of ${ctx.service}` }).locator('tr[data-row="nightly-sync"] [data-tick]').first().waitFor(VISIBLE)),
  },
  {
    name: "Outbox",
    from: "navigation",
    waitsFor: "the Pending figure",
    calls: [{ procedure: "outbox.status" }],
    load: (page, ctx) => timed(page, "/outbox", (p) => p.getByRole("region", { name: `outbox of ${ctx.service}` }).locator('[data-stat="Pending"] .stat-value').filter({ hasText: /\d/ }).waitFor(VISIBLE)),
  },
  {
    name: "Events",
    from: "navigation",
    waitsFor: "\"Kafka events not enabled\" (the service runs no Kafka consumer)",
    calls: [{ procedure: "events.status" }],
    load: (page, ctx) => timed(page, "/events", (p) => p.getByRole("region", { name: `events of ${ctx.service}` }).getByText("Kafka events not enabled").waitFor(VISIBLE)),
  },
  {
    name: "Contracts",
    from: "navigation",
    waitsFor: "the graph laid out, with the receipt.registered event node",
    calls: [{ procedure: "contracts.graph" }],
    load: (page) => timed(page, "/contracts", (p) => p.getByRole("group", { name: "Contracts graph" }).getByRole("button", { name: "event receipt.registered" }).waitFor(VISIBLE)),
  },
  {
    name: "Audit trail",
    from: "navigation",
    waitsFor: "the 100th entry",
    calls: [{ procedure: "audit.list", input: { limit: 100 } }],
    load: (page) => timed(page, "/audit", (p) => p.getByRole("table", { name: "Audit trail" }).locator("tbody tr:nth-child(100)").waitFor(VISIBLE)),
  },
];

/** Server-side calls that no page makes on load but that the same data set makes expensive or cheap. */
export const EXTRA_CALLS: { name: string; call: Call }[] = [
  { name: "bulk dialog: preview, no filter", call: { procedure: "deadLetters.preview", input: { filter: {} } } },
  { name: "bulk dialog: preview, one tenant", call: { procedure: "deadLetters.preview", input: { filter: { tenantId: "tenant-3" } } } },
  { name: "dead letters filtered by tenant", call: { procedure: "deadLetters.list", input: { limit: 100, filter: { tenantId: "tenant-3" } } } },
  { name: "dead letters filtered by error text", call: { procedure: "deadLetters.list", input: { limit: 100, filter: { errorText: "ECONNRESET" } } } },
  { name: "groups of one task", call: { procedure: "deadLetters.groups", input: { filter: { task: "billing.sync" } } } },
  { name: "queues of one tenant", call: { procedure: "queues.list", input: { tenant: "tenant-3" } } },
  { name: "audit of one tenant", call: { procedure: "audit.list", input: { limit: 100, tenant: "tenant-3" } } },
];

/** Replaces "$deadId"-style placeholders in an input with the context's values. */
export function resolveInput(input: unknown, ctx: PageContext): unknown {
  if (input === undefined) return undefined;
  return JSON.parse(JSON.stringify(input), (_key, value) => (typeof value === "string" && value.startsWith("$") ? (ctx as unknown as Record<string, string>)[value.slice(1)] : value));
}
