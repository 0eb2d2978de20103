import path from "node:path";
import { expect } from "@playwright/test";
import { SCREENSHOTS, TOKENS, adminCall, eventually, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * The Flows page (docs/dashboard.md#flows) in a real browser against billing on PostgreSQL, whose operator token
 * the dashboard holds: the list by state, a flow drawn as its graph, a step's job, Retry of a dead step and Cancel
 * flow, each confirmed and audited, the graph following the flow as it runs on.
 */
const { billingViewer: BILLING_VIEWER } = TOKENS;

test.describe.configure({ mode: "serial" });

interface Created {
  flowId: string;
  jobIds: Record<string, string>;
}

test.describe("flows in a browser", () => {

  async function startFlow(service: string, query: string): Promise<Created> {
    return (await (await fetch(`${service}/flow?${query}`, { method: "POST" })).json()) as Created;
  }

  async function flowState(service: string, id: string): Promise<string | null> {
    const { body } = await adminCall(service, BILLING_VIEWER, "flows.get", { id });
    return body.result.data.flow?.state ?? null;
  }

  async function audit(service: string): Promise<Array<{ action: string; actor: string; ids: string[]; filter: Record<string, unknown> | null }>> {
    return (await adminCall(service, BILLING_VIEWER, "audit.list", {})).body.result.data.entries;
  }

  test("lists flows by state, draws one as its graph, opens a step's job, retries its dead step and cancels another flow", async ({ session: context, stack: { billing } }) => {
    test.setTimeout(300_000);
    // billing.charge fails until /fix: the flow's ship step dies and notify waits.
    await fetch(`${billing.url}/break`, { method: "POST" });
    const failed = await startFlow(billing.url, "name=order.fulfil");
    await eventually("the flow failed", async () => (await flowState(billing.url, failed.flowId)) === "failed");
    const held = await startFlow(billing.url, "name=report.build&hold=1");

    const page = await context.newPage();
    await signedIn(page, "/flows?service=billing");
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows" })).toHaveAttribute("aria-current", "page");
    const table = page.getByRole("table", { name: "Flows" });
    const failedRow = table.locator(`tr[data-row="${failed.flowId}"]`);
    await expect(failedRow).toContainText("failed");
    await expect(failedRow).toContainText("1/3");
    await expect(table.locator(`tr[data-row="${held.flowId}"]`)).toContainText("running");
    await expectAccessible(page);

    // The state filter: only failed flows.
    await page.getByRole("group", { name: "State" }).getByRole("button", { name: "Failed" }).click();
    await failedRow.waitFor();
    await expect(table.locator(`tr[data-row="${held.flowId}"]`)).toHaveCount(0);
    for (const state of await table.locator("tbody tr td:nth-child(3)").allTextContents()) expect(state).toBe("failed");

    // The flow's page: its graph, each box saying its state in words, edges by `after`.
    await failedRow.getByRole("link", { name: "Flow order.fulfil" }).click();
    await page.getByRole("heading", { name: "order.fulfil" }).waitFor();
    const graph = page.getByRole("group", { name: "Graph of order.fulfil: 3 steps" });
    await expect(graph.locator('[data-step="charge"]')).toHaveAttribute("data-state", "completed");
    await expect(graph.locator('[data-step="ship"]')).toHaveAttribute("data-state", "dead");
    await expect(graph.locator('[data-step="ship"]')).toContainText("dead");
    await expect(graph.locator('[data-step="notify"]')).toContainText("waiting");
    await expect(graph.locator('[data-edge="charge>ship"]')).toHaveCount(1);
    await expect(graph.locator('[data-edge="ship>notify"]')).toHaveCount(1);
    // Left to right by depth.
    const x = async (step: string) => (await graph.locator(`[data-step="${step}"]`).boundingBox())!.x;
    expect(await x("charge")).toBeLessThan(await x("ship"));
    expect(await x("ship")).toBeLessThan(await x("notify"));
    await expectAccessible(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-flow.png"), fullPage: true });

    // A step's box opens its job (keyboard: Tab to it, Enter).
    await graph.getByRole("button", { name: /^charge completed/ }).focus();
    await page.keyboard.press("Enter");
    const chargeDrawer = page.getByRole("dialog", { name: "Step charge · billing.ping" });
    await expect(chargeDrawer.locator(`[data-job="${failed.jobIds.charge}"]`)).toBeVisible();
    await chargeDrawer.getByRole("button", { name: "Close" }).click();

    // Retry the dead step from its drawer, confirmed; the fix is deployed first, so the flow goes on to the end.
    await graph.getByRole("button", { name: /^ship dead/ }).click();
    const shipDrawer = page.getByRole("dialog", { name: "Step ship · billing.charge" });
    await expect(shipDrawer.locator(`[data-job="${failed.jobIds.ship}"]`)).toBeVisible();
    await shipDrawer.getByRole("button", { name: "Retry step ship" }).click();
    const confirm = page.getByRole("dialog", { name: "Retry step ship" });
    await expectAccessible(page);
    await fetch(`${billing.url}/fix`, { method: "POST" });
    await confirm.getByRole("button", { name: "Retry this step" }).click();
    await page.getByText(`Retried step ship of flow ${failed.flowId}`).waitFor();
    // The graph follows the flow without a reload.
    await expect(graph.locator('[data-step="notify"]')).toHaveAttribute("data-state", "completed", { timeout: 30_000 });
    await expect(graph.locator('[data-step="ship"]')).toHaveAttribute("data-state", "completed");
    await expect(page.locator("[data-flow-summary]")).toContainText("3 of 3 steps completed");
    expect(await flowState(billing.url, failed.flowId)).toBe("completed");
    const retried = (await audit(billing.url)).find((e) => e.action === "flows.retryStep");
    expect(retried).toMatchObject({ ids: [failed.jobIds.ship], filter: { flow: failed.flowId, step: "ship" } });

    // Cancel the held flow from its page, confirmed.
    await page.goto(`/flows/${held.flowId}?service=billing`);
    await page.getByRole("heading", { name: "report.build" }).waitFor();
    await page.getByRole("button", { name: "Cancel flow" }).click();
    const cancel = page.getByRole("dialog", { name: "Cancel flow report.build" });
    await cancel.getByText("(3 now)").waitFor();
    await cancel.getByRole("button", { name: "Cancel this flow" }).click();
    await page.getByText(`Cancelled flow ${held.flowId}: 3 steps will not run.`).waitFor();
    await expect(page.getByRole("group", { name: "Graph of report.build: 3 steps" }).locator('[data-step="charge"]')).toHaveAttribute("data-state", "cancelled");
    await expect(page.getByRole("button", { name: "Cancel flow" })).toHaveCount(0);
    expect(await flowState(billing.url, held.flowId)).toBe("cancelled");
    const cancelled = (await audit(billing.url)).find((e) => e.action === "flows.cancel");
    expect(cancelled?.filter).toEqual({ flow: held.flowId });
    expect([...cancelled!.ids].sort()).toEqual(Object.values(held.jobIds).sort());
    await page.close();
  });
});
