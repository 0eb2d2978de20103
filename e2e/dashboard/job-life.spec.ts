import path from "node:path";
import { expect } from "@playwright/test";
import { SCREENSHOTS, TOKENS, adminCall, eventually, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * A job's life in the job drawer (docs/dashboard.md#the-job-drawer), in a real browser against billing on
 * PostgreSQL: a running job's progress in the running tab and its drawer, and a dead job's attempts as a timeline
 * with each attempt's outcome, worker, error and the lines its handler logged; each page checked with axe.
 */
const { billingViewer: BILLING_VIEWER, billingOperator: BILLING_OPERATOR } = TOKENS;

test.describe.configure({ mode: "serial" });

test.describe("a job's life in the drawer", () => {

  async function job(service: string, id: string): Promise<any> {
    return (await adminCall(service, BILLING_VIEWER, "jobs.get", { id })).body.result.data.job;
  }

  test("shows a running job's progress, live, in the running tab and in its drawer", async ({ session: context, stack: { billing } }) => {
    test.setTimeout(180_000);
    const { id } = (await (await fetch(`${billing.url}/nap?ms=120000`, { method: "POST" })).json()) as { id: string };
    try {
      await eventually("the job running with its progress", async () => {
        const found = await job(billing.url, id);
        return found?.state === "running" && found.progress === 40;
      });
      const page = await context.newPage();
      await signedIn(page, "/jobs/states?service=billing&state=running");
      const table = page.getByRole("table", { name: "running jobs" });
      await expect(table.getByRole("columnheader", { name: "Progress" })).toBeVisible();
      const details = page.getByRole("button", { name: `Details of ${id}` });
      await expect(details).toBeVisible();
      await expect(table.locator("tr", { has: details })).toContainText("40%");
      await details.click();
      const drawer = page.getByRole("dialog", { name: `billing.ping · ${id}` });
      const progress = drawer.locator("[data-job-progress]");
      await expect(progress).toContainText("40%");
      await expect(progress.getByRole("progressbar", { name: "progress: 40%" })).toBeVisible();
      await expect(drawer.locator("[data-job-timeline]")).toContainText("No attempt has ended yet.");
      await expectAccessible(page);
      await page.emulateMedia({ colorScheme: "light" });
      await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-job-progress.png") });
      await page.close();
    } finally {
      await adminCall(billing.url, BILLING_OPERATOR, "jobs.cancel", { id }, true);
    }
  });

  test("shows a dead job's attempts as a timeline with their outcome, worker, error and logged lines", async ({ session: context, stack: { billing } }) => {
    test.setTimeout(180_000);
    await fetch(`${billing.url}/break`, { method: "POST" });
    const invoice = `life-${Date.now()}`;
    const { ids } = (await (await fetch(`${billing.url}/fail?count=1&invoice=${invoice}`, { method: "POST" })).json()) as { ids: string[] };
    const id = ids[0]!;
    const dead = await eventually("the job dead", async () => {
      const found = await job(billing.url, id);
      return found?.state === "dead" ? found : undefined;
    });
    const attempts = dead.attemptDetails as Array<{ attempt: number; outcome: string; workerId: string; logs: Array<{ message: string }> }>;
    expect(attempts.map((a) => a.outcome)).toEqual([...attempts.slice(0, -1).map(() => "failed"), "dead"]);

    const page = await context.newPage();
    await signedIn(page, "/jobs/states?service=billing&state=dead");
    await expect(page.getByRole("table", { name: "dead jobs" }).getByRole("columnheader", { name: "Duration" })).toBeVisible();
    await page.getByRole("button", { name: `Details of ${id}` }).click();
    const drawer = page.getByRole("dialog", { name: `billing.charge · ${id}` });
    const timeline = drawer.getByRole("list", { name: "attempts" });
    await expect(timeline.getByRole("listitem")).toHaveCount(attempts.length);
    // Newest first: the attempt that killed it, with its error and its own lines.
    const last = timeline.getByRole("listitem").first();
    await expect(last).toHaveAttribute("data-outcome", "dead");
    await expect(last).toContainText(`attempt ${attempts.length}`);
    await expect(last).toContainText(attempts.at(-1)!.workerId);
    await expect(last).toContainText(`CardDeclined: card declined for invoice ${invoice}`);
    await expect(last.getByRole("table", { name: "log lines" })).toContainText("charging");
    await expect(drawer.locator("[data-duration-ms]")).toBeVisible();
    await expectAccessible(page);
    await page.emulateMedia({ colorScheme: "light" });
    await drawer.locator("[data-job-timeline]").scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-job-timeline.png") });
    await page.close();
  });
});
