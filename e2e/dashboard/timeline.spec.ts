import path from "node:path";
import { expect } from "@playwright/test";
import { SCREENSHOTS, TOKENS, adminCall, eventually, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * The Timeline page (docs/dashboard.md#timeline) in a real browser: one request whose jobs ran on billing
 * (PostgreSQL, found through its request index) and on shipping (the memory queue, in its own process), joined
 * into one waterfall from a job's id; the job drawer's and the Flows page's links to it; the Overview's role badge.
 */
const { billingViewer: BILLING_VIEWER, shippingOperator: SHIPPING_OPERATOR } = TOKENS;

test.describe.configure({ mode: "serial", timeout: 180_000 });

test.describe("timeline in a browser", () => {

  async function completed(service: string, token: string, requestId: string, count: number) {
    await eventually(`${count} completed jobs of ${requestId}`, async () => {
      const { body } = await adminCall(service, token, "trace.get", { id: requestId });
      const entries = body.result.data.entries as Array<{ kind: string; outcome: string }>;
      return entries.filter((e) => e.kind === "job" && e.outcome === "completed").length >= count;
    });
  }

  test("joins one request's jobs on billing and shipping into one waterfall, from a job's id, with links from jobs and flows", async ({ session: context, stack: { billing, shipping } }) => {
    test.setTimeout(300_000);
    const requestId = `req-e2e-${Date.now()}`;
    const made = (await (await fetch(`${billing.url}/fail?count=2&task=billing.ping&request=${requestId}`, { method: "POST" })).json()) as { ids: string[] };
    await fetch(`${shipping.url}/fail?count=1&task=shipping.ping&request=${requestId}`, { method: "POST" });
    await completed(billing.url, BILLING_VIEWER, requestId, 2);
    await completed(shipping.url, SHIPPING_OPERATOR, requestId, 1);

    const page = await context.newPage();
    try {
      // From one of billing's job ids: billing names the request, shipping is asked by it.
      await signedIn(page, `/timeline?id=${encodeURIComponent(made.ids[0]!)}`);
      await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Timeline" })).toHaveAttribute("aria-current", "page");
      const summary = page.locator("[data-timeline-summary]");
      await expect(summary).toContainText(requestId);
      await expect(summary).toContainText("billing, shipping");
      const table = page.getByRole("table", { name: "Timeline" });
      for (const id of made.ids) await expect(table.locator(`tr[data-row="billing:job:${id}"]`)).toContainText("completed");
      await expect(table.locator('tr[data-row^="shipping:job:"]')).toHaveCount(1);
      await expect(table.locator('tr[data-row^="shipping:job:"]')).toContainText("shipping.ping");
      // Each job's attempt, with the worker that ran it, and a bar in the waterfall per entry.
      await expect(table.locator('tr[data-row^="billing:attempt:"]')).toHaveCount(2);
      await expect(table.locator(".waterfall-bar")).toHaveCount(await table.locator("tbody tr").count());
      await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-timeline.png"), fullPage: true });
      await expectAccessible(page);

      // A job opens in the drawer, whose Timeline link comes back here by the job's own id.
      await table.locator(`tr[data-row="billing:job:${made.ids[1]}"]`).getByRole("button", { name: "billing.ping" }).click();
      const drawer = page.getByRole("dialog");
      await expect(drawer).toContainText(made.ids[1]!);
      await drawer.locator("[data-timeline-link]").click();
      await expect(page).toHaveURL(new RegExp(`/timeline\\?id=${made.ids[1]}$`));
      await expect(page.getByRole("dialog")).toHaveCount(0);
      await expect(page.getByLabel("Request, job or flow id")).toHaveValue(made.ids[1]!);
      await expect(page.locator("[data-timeline-summary]")).toContainText(requestId);

      // An id no service knows.
      await page.getByLabel("Request, job or flow id").fill("no-such-request");
      await page.getByRole("button", { name: "Show timeline" }).click();
      await expect(page.getByText("Nothing recorded")).toBeVisible();

      // Every flow links to its timeline.
      const flow = (await (await fetch(`${billing.url}/flow?name=timeline.flow&hold=1`, { method: "POST" })).json()) as { flowId: string };
      await page.goto("/flows?service=billing");
      await page.getByRole("table", { name: "Flows" }).locator(`tr[data-row="${flow.flowId}"] [data-timeline-link]`).click();
      await expect(page.locator(`tr[data-row="billing:flow:${flow.flowId}"]`)).toContainText("running");
      await expect(page.locator('tr[data-row^="billing:job:"]')).toHaveCount(3);
      await expectAccessible(page);

      // The Overview shows the person's role; shipping's card says its dashboard token is a viewer token.
      await page.goto("/");
      const shippingCard = page.getByLabel("service shipping");
      await expect(shippingCard.locator("[data-person-role]")).toHaveText("admin");
      await expect(shippingCard.locator("[data-token-role]")).toHaveText("token: viewer");
      await expect(page.getByLabel("service billing").locator("[data-token-role]")).toHaveCount(0);
    } finally {
      await page.close();
    }
  });
});
