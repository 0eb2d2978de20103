import path from "node:path";
import { expect } from "@playwright/test";
import { SCREENSHOTS, TOKENS, adminCall, eventually, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * The Stats page and the Overview's charts (docs/dashboard.md#stats) in a real browser: billing's worker runs a few
 * jobs, its process adds their minute to jfast_stats, and the page charts throughput, run time and wait with axes,
 * units and tooltips over 1 h, 24 h and 7 d; the Overview shows each queue's latency beside its depth.
 */
const { billingOperator: BILLING_OPERATOR } = TOKENS;

test.describe.configure({ mode: "serial", timeout: 180_000 });

test.describe("stats charts in a browser", () => {

  test("charts throughput, run time and wait with axes and tooltips over 1 h, 24 h and 7 d, and the Overview shows latency per queue", async ({ session: context, stack: { billing } }) => {
    // Five short jobs on billing's worker (PostgreSQL): counted, with their run time and wait, in this minute.
    for (let i = 0; i < 5; i++) await fetch(`${billing.url}/nap?ms=50`, { method: "POST" });
    const latency = await eventually("billing's stats to count the pings", async () => {
      const { body } = await adminCall(billing.url, BILLING_OPERATOR, "stats.latency", { since: "1h" });
      const ping = body.result.data.tasks.find((t: { task: string }) => t.task === "billing.ping");
      return ping && ping.completed >= 5 ? ping : null;
    });
    expect(latency.runMs.p50).toBeGreaterThanOrEqual(40);

    const page = await context.newPage();
    try {
      await signedIn(page, "/stats");
      await page.getByRole("heading", { name: "Stats", level: 1 }).waitFor();
      await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Stats" })).toHaveAttribute("aria-current", "page");
      const card = page.getByRole("region", { name: "stats of billing" });
      const throughput = card.locator('figure[data-chart="throughput"]');
      // Bars with a time axis and a count axis with its unit.
      await expect(throughput.locator(".recharts-bar-rectangle").first()).toBeVisible();
      await expect(throughput.locator(".recharts-wrapper")).toContainText(/\d\d:\d\d/);
      await expect(throughput.locator(".recharts-wrapper")).toContainText("jobs / min");
      await expect(throughput).toHaveAttribute("aria-label", /\d+ completed/);
      // Run time and wait: p50, p95, p99 lines on a duration axis.
      const run = card.locator('figure[data-chart="runMs"]');
      await expect(run.locator(".recharts-line-curve")).toHaveCount(3);
      await expect(run.locator(".recharts-wrapper")).toContainText(/\d+ ms/);
      await expect(card.locator('figure[data-chart="waitMs"] .recharts-line-curve')).toHaveCount(3);
      // A tooltip names the minute and the counts under the pointer.
      const box = (await throughput.locator(".recharts-wrapper").boundingBox())!;
      await page.mouse.move(box.x + box.width - 12, box.y + box.height / 2);
      await expect(throughput.locator(".recharts-tooltip-wrapper")).toContainText(/completed.*in the minute/s);
      // The table per task: the pings with their percentiles.
      await expect(card.getByRole("table", { name: "Latency per task of billing" }).locator("tbody tr", { hasText: "billing.ping" })).toContainText(/ms/);
      await expect(card.getByRole("table", { name: "Latency per queue of billing" })).toContainText("Oldest waiting");
      await expectAccessible(page);
      await page.emulateMedia({ colorScheme: "light" });
      await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-stats.png"), fullPage: true });

      // One task; then a day of minutes and a week of hours.
      await card.getByRole("combobox", { name: "Task" }).selectOption("billing.ping");
      await expect(throughput).toHaveAttribute("aria-label", /billing\.ping, last 1h: \d+ completed/);
      await page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "24h" }).click();
      // A day is 1 440 points in each of three charts: drawn in about 2 s on a quiet machine, longer under CI's load.
      await expect(card).toContainText("per minute", { timeout: 60_000 });
      await expect(throughput.locator(".recharts-bar-rectangle").first()).toBeVisible();
      await page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "7d" }).click();
      await expect(card).toContainText("per hour", { timeout: 60_000 });
      await expect(throughput.locator(".recharts-wrapper")).toContainText("jobs / hour");
      await expect(throughput.locator(".recharts-bar-rectangle").first()).toBeVisible();

      // The Overview: the throughput chart with axes, each queue's latency beside its depth, the oldest waiting job's age.
      await page.goto("/");
      const overview = page.getByRole("region", { name: "service billing" });
      await expect(overview.locator('figure[data-chart="throughput"] .recharts-wrapper')).toContainText(/\d\d:\d\d/);
      const queues = overview.getByRole("table", { name: "Depth and latency per queue of billing" });
      await expect(queues.locator("tbody tr").first()).toContainText("default");
      await expect(queues.locator("tbody tr").first()).toContainText(/ms|s/);
      await expect(overview.locator('[data-stat="Oldest waiting"]')).toBeVisible();
      await expectAccessible(page);
    } finally {
      await page.close();
    }
  });
});
