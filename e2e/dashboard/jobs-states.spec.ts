import { expect } from "@playwright/test";
import { TOKENS, adminCall, eventually, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * The jobs page, state by state (docs/dashboard.md#jobs-by-state), in a real browser against the suite's services:
 * billing on PostgreSQL (the dashboard holds its operator token) and shipping on the memory backend (a viewer token).
 */
const { billingViewer: BILLING_VIEWER } = TOKENS;

test.describe.configure({ mode: "serial" });

test.describe("jobs by state in a browser", () => {

  async function enqueue(service: string, query: string): Promise<string[]> {
    return ((await (await fetch(`${service}/fail?${query}`, { method: "POST" })).json()) as { ids: string[] }).ids;
  }

  async function jobState(service: string, id: string): Promise<string | null> {
    const { body } = await adminCall(service, BILLING_VIEWER, "jobs.get", { id });
    return body.result.data.job?.state ?? null;
  }

  test("browses every state with counts, runs a scheduled job now and cancels a waiting one, audited", async ({ session: context, stack: { billing } }) => {
    test.setTimeout(300_000);
    const [runMe, cancelMe] = await enqueue(billing.url, "count=2&task=billing.ping&delay=600&tenant=globex");
    const page = await context.newPage();
    await signedIn(page, "/jobs/states?service=billing&state=scheduled");
    const table = page.getByRole("table", { name: "scheduled jobs" });
    await table.locator(`tr[data-row="${runMe}"]`).waitFor();
    await table.locator(`tr[data-row="${cancelMe}"]`).waitFor();
    expect(Number(await page.locator('[data-count="scheduled"]').textContent())).toBeGreaterThanOrEqual(2);

    // Oldest first puts the earlier of the two first; the tenant filter keeps only these two.
    await page.getByRole("button", { name: "Oldest first" }).click();
    await page.getByLabel("Tenant").fill("globex");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(table.locator("tbody tr")).toHaveCount(2);
    expect(await table.locator("tbody tr").first().getAttribute("data-row")).toBe(runMe);
    await expectAccessible(page);

    // Every state opens: a table or its empty state, never an error.
    for (const state of ["Ready", "Running", "Completed", "Dead", "Cancelled", "Scheduled"]) {
      await page.getByRole("group", { name: "State" }).getByRole("button", { name: new RegExp(`^${state}`) }).click();
      await expect(page.getByRole("table", { name: `${state.toLowerCase()} jobs` }).or(page.getByText(`No ${state.toLowerCase()} jobs on this page`))).toBeVisible();
      await expect(page.locator(".alert-bad")).toHaveCount(0);
    }

    // Run now, confirmed in a dialog: the job becomes due and the worker runs it.
    await table.getByRole("button", { name: `Run now ${runMe}` }).click();
    const dialog = page.getByRole("dialog", { name: `Run now job ${runMe}` });
    await expectAccessible(page);
    await dialog.getByRole("button", { name: "Run now this job" }).click();
    await page.getByText(`Made due now ${runMe} on billing.`).waitFor();
    await eventually("the job run now to complete", async () => [null, "completed"].includes(await jobState(billing.url, runMe!)));

    // Cancel the other waiting job; keyboard only: focus the button, Enter, then confirm with Enter.
    await table.getByRole("button", { name: `Cancel ${cancelMe}` }).focus();
    await page.keyboard.press("Enter");
    const confirm = page.getByRole("dialog", { name: `Cancel job ${cancelMe}` });
    const cancelButton = confirm.getByRole("button", { name: "Cancel this job" });
    await cancelButton.focus();
    // The page's data changes under the open dialog (a job enqueued meanwhile shows in the table behind it): the focus
    // stays where the keyboard put it.
    const [arrived] = await enqueue(billing.url, "count=1&task=billing.ping&delay=600&tenant=globex");
    await table.locator(`tr[data-row="${arrived}"]`).waitFor({ state: "attached" });
    await expect(cancelButton).toBeFocused();
    await page.keyboard.press("Enter");
    await page.getByText(`Cancelled ${cancelMe} on billing.`).waitFor();
    expect(await jobState(billing.url, cancelMe!)).toBe("cancelled");
    await page.getByRole("group", { name: "State" }).getByRole("button", { name: /^Cancelled/ }).click();
    await page.getByRole("table", { name: "cancelled jobs" }).locator(`tr[data-row="${cancelMe}"]`).waitFor();

    const audit = (await adminCall(billing.url, BILLING_VIEWER, "audit.list", {})).body.result.data.entries as Array<{ action: string; ids: string[] }>;
    expect(audit.find((e) => e.action === "jobs.runNow")?.ids).toEqual([runMe]);
    expect(audit.find((e) => e.action === "jobs.cancel" && e.ids[0] === cancelMe)).toBeTruthy();
    await page.goto("/audit");
    await page.getByText("jobs.runNow").first().waitFor();
    await page.close();
  });

  test("deletes every matching scheduled job after previewing the count", async ({ session: context, stack: { billing } }) => {
    test.setTimeout(180_000);
    const ids = await enqueue(billing.url, "count=3&task=billing.ping&delay=900&tenant=initech");
    const page = await context.newPage();
    await signedIn(page, "/jobs/states?service=billing&state=scheduled");
    await page.getByLabel("Tenant").fill("initech");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByRole("table", { name: "scheduled jobs" }).locator("tbody tr")).toHaveCount(3);
    await page.getByRole("button", { name: "Delete all matching…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete scheduled jobs" });
    await dialog.getByText("3 scheduled jobs on billing match").waitFor();
    await dialog.getByRole("button", { name: "Delete 3 jobs" }).click();
    await page.getByText("Deleted 3 jobs on billing.").waitFor();
    for (const id of ids) expect(await jobState(billing.url, id)).toBeNull();
    const audit = (await adminCall(billing.url, BILLING_VIEWER, "audit.list", {})).body.result.data.entries as Array<{ action: string; ids: string[]; filter: unknown }>;
    expect(audit.find((e) => e.action === "jobs.bulk.delete")).toMatchObject({ filter: { state: "scheduled", tenantId: "initech" } });
    expect([...audit.find((e) => e.action === "jobs.bulk.delete")!.ids].sort()).toEqual([...ids].sort());
    await page.close();
  });

  test("a viewer sees the jobs but no action is enabled", async ({ session: context, stack: { shipping } }) => {
    const [waiting] = await enqueue(shipping.url, "count=1&task=shipping.ping&delay=600");
    const page = await context.newPage();
    await signedIn(page, "/jobs/states?service=shipping&state=scheduled");
    const row = page.getByRole("table", { name: "scheduled jobs" }).locator(`tr[data-row="${waiting}"]`);
    await row.waitFor();
    await expect(row.getByRole("button", { name: `Cancel ${waiting}` })).toBeDisabled();
    await expect(row.getByRole("button", { name: `Run now ${waiting}` })).toBeDisabled();
    await expect(page.getByRole("button", { name: "Delete all matching…" })).toBeDisabled();
    await page.close();
  });
});
