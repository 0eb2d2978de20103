import path from "node:path";
import { expect } from "@playwright/test";
import { SCREENSHOTS, TOKENS, adminCall, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * The Workers page (docs/dashboard.md#workers) in a real browser: billing's worker (PostgreSQL, jfast_workers) and
 * shipping's (the memory queue, in its own process) listed online, the job billing's worker runs with its progress
 * and elapsed time and a link to it, and the Overview's "workers online".
 */
const { billingOperator: BILLING_OPERATOR } = TOKENS;

test.describe.configure({ mode: "serial", timeout: 180_000 });

test.describe("workers in a browser", () => {

  test("shows each service's workers online, the job one runs with its progress and elapsed time, and links to it", async ({ session: context, stack: { billing } }) => {
    // A job that runs two minutes on billing's worker, 40 % done.
    const { id } = (await (await fetch(`${billing.url}/nap?ms=120000`, { method: "POST" })).json()) as { id: string };
    const page = await context.newPage();
    try {
      await signedIn(page, "/workers");
      await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
      await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workers" })).toHaveAttribute("aria-current", "page");

      const billingWorkers = page.getByRole("table", { name: "Workers of billing", exact: true });
      await expect(billingWorkers.locator("tbody tr")).toHaveCount(1);
      await expect(billingWorkers.locator("tbody tr")).toContainText("online");
      await expect(page.getByRole("table", { name: "Workers of shipping", exact: true }).locator("tbody tr")).toContainText("online");

      // Within a heartbeat, the running job: its link, task, progress and elapsed time.
      const running = page.getByRole("table", { name: "Jobs running on the workers of billing" });
      const row = running.locator("tbody tr", { has: page.getByRole("link", { name: `job ${id}` }) });
      await expect(row).toContainText("billing.ping");
      await expect(billingWorkers.locator("tbody tr")).toContainText("1 / 4");
      await expect(row.getByRole("progressbar", { name: `progress of job ${id}` })).toBeVisible();
      await expect(row).toContainText("40 %");
      await expect(row.locator("time")).toHaveText(/\d+ s|\d+ min/);
      await expectAccessible(page);
      await page.emulateMedia({ colorScheme: "light" });
      await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-workers.png"), fullPage: true });

      // The link opens the job.
      await row.getByRole("link", { name: `job ${id}` }).click();
      await page.waitForURL((url) => url.pathname === "/jobs" && url.searchParams.get("id") === id);

      // The Overview counts the workers online on each service's card.
      await page.goto("/");
      const card = page.getByRole("region", { name: "service billing" });
      await expect(card.getByRole("link", { name: "1 worker online" })).toBeVisible();
      await expectAccessible(page);
    } finally {
      await page.close();
      await adminCall(billing.url, BILLING_OPERATOR, "jobs.cancel", { id }, true);
    }
  });
});
