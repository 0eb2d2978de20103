import { mkdir } from "node:fs/promises";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCREENSHOTS, adminCall, eventually, queueStats, startDashboard, startService, type Running } from "./fixtures.js";

/**
 * The dashboard in a real browser (Debian's Chromium) against two real services: billing on PostgreSQL and
 * shipping on the memory backend. The dashboard holds an operator token for billing and a viewer token for
 * shipping, so both roles are on screen at once.
 */
const BILLING_OPERATOR = `operator-${Date.now()}-billing`;
const BILLING_VIEWER = `viewer-${Date.now()}-billing`;
const SHIPPING_OPERATOR = `operator-${Date.now()}-shipping`;
const SHIPPING_VIEWER = `viewer-${Date.now()}-shipping`;
const PASSWORD = "correct horse battery staple";

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

describe("dashboard in a browser", () => {
  let billing: Running;
  let shipping: Running;
  let dashboard: Running;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    [billing, shipping] = await Promise.all([
      startService({ name: "billing", backend: "postgres", tokens: `ops:operator:${BILLING_OPERATOR},viewer:${BILLING_VIEWER}` }),
      startService({ name: "shipping", backend: "memory", tokens: `ops:operator:${SHIPPING_OPERATOR},dashboard:viewer:${SHIPPING_VIEWER}` }),
    ]);
    dashboard = await startDashboard({
      password: PASSWORD,
      services: [
        { name: "billing", url: billing.url, token: BILLING_OPERATOR },
        { name: "shipping", url: shipping.url, token: SHIPPING_VIEWER },
      ],
    });
    // Dead letters made for real: jobs whose handler throws until its bug is fixed, out of attempts.
    await fetch(`${billing.url}/fail?count=3`, { method: "POST" });
    await fetch(`${shipping.url}/fail?count=2`, { method: "POST" });
    await eventually("3 dead letters in billing", async () => (await queueStats(billing.url)).depths.dead === 3);
    await eventually("2 dead letters in shipping", async () => (await queueStats(shipping.url)).depths.dead === 2);
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: dashboard.url });
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await Promise.all([dashboard?.stop(), billing?.stop(), shipping?.stop()]);
  }, 60_000);

  /** Waits for a value the page reaches after a fetch or a poll (vitest's default of 1 s is too short for that). */
  function poll<T>(fn: () => Promise<T> | T) {
    return expect.poll(fn, { timeout: 20_000, interval: 200 });
  }

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `dashboard-${name}.png`), fullPage: true });
  }

  async function expectAccessible(page: Page) {
    const results = await new AxeBuilder({ page }).analyze();
    const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
  }

  it("refuses a wrong password and shows nothing without a session", async () => {
    const anonymous = await browser.newContext({ baseURL: dashboard.url });
    const page = await anonymous.newPage();
    try {
      await page.goto("/dead-letters");
      expect(new URL(page.url()).pathname).toBe("/login");
      await page.getByLabel("Password").fill("not the password");
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByText("Wrong password.").waitFor();
      expect(new URL(page.url()).pathname).toBe("/login");
      const api = await page.request.get("/api/admin/billing/overview.get");
      expect(api.status()).toBe(401);
      await expectAccessible(page);
      await shot(page, "login");
    } finally {
      await anonymous.close();
    }
  }, 60_000);

  it("logs in and shows both services with their depths", async () => {
    const page = await context.newPage();
    await page.goto("/login");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const billingCard = page.getByRole("region", { name: "service billing" });
    const shippingCard = page.getByRole("region", { name: "service shipping" });
    await poll(() => billingCard.locator('[data-stat="Dead"] .stat-value').textContent()).toBe("3");
    await poll(() => shippingCard.locator('[data-stat="Dead"] .stat-value').textContent()).toBe("2");
    expect(await billingCard.getByText("postgres").count()).toBeGreaterThan(0);
    expect(await shippingCard.getByText("memory").count()).toBeGreaterThan(0);
    expect(await billingCard.getByText("degraded").count()).toBeGreaterThan(0);
    // The tokens stay on the dashboard's server.
    const html = await page.content();
    for (const token of [BILLING_OPERATOR, SHIPPING_VIEWER]) expect(html).not.toContain(token);
    await expectAccessible(page);
    await shot(page, "overview");
    await page.close();
  }, 60_000);

  it("lists dead letters of both services with their error, and the stack on demand", async () => {
    const page = await context.newPage();
    await page.goto("/dead-letters");
    const table = page.getByRole("table", { name: "Dead letters" });
    await poll(() => table.locator("tbody tr").count()).toBe(5);
    expect(await table.locator(".error-text", { hasText: /^card declined for invoice inv-/ }).count()).toBe(5);
    expect(await table.getByText("CardDeclined", { exact: true }).count()).toBe(5);
    const firstStack = table.locator("details").first();
    await firstStack.locator("summary").click();
    expect(await firstStack.locator("pre").textContent()).toContain("CardDeclined: card declined");
    for (const token of [BILLING_OPERATOR, SHIPPING_VIEWER]) expect(await page.content()).not.toContain(token);
    await expectAccessible(page);
    await shot(page, "dead-letters");
    await page.close();
  }, 60_000);

  it("a viewer token cannot retry: the button is disabled and the service refuses", async () => {
    const page = await context.newPage();
    await page.goto("/dead-letters?service=shipping");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(2);
    await poll(() => rows.first().getByRole("button", { name: /^Retry / }).isDisabled()).toBe(true);
    expect(await rows.first().getByRole("button", { name: /^Discard / }).isDisabled()).toBe(true);
    const id = (await rows.first().getAttribute("data-row"))!.split("/")[1]!;
    const refused = await adminCall(shipping.url, SHIPPING_VIEWER, "deadLetters.retry", { ids: [id] }, true);
    expect(refused.status).toBe(403);
    expect(refused.body.error.data.code).toBe("FORBIDDEN");
    expect((await queueStats(shipping.url)).depths.dead).toBe(2);
    // The dashboard's server forwards the service's refusal unchanged.
    const proxied = await page.request.post("/api/admin/shipping/deadLetters.retry", { data: { ids: [id] }, headers: { origin: dashboard.url } });
    expect(proxied.status()).toBe(403);
    await page.close();
  }, 60_000);

  it("opens a dead letter's detail with its payload redacted and every attempt", async () => {
    const page = await context.newPage();
    await page.goto("/dead-letters?service=billing");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(3);
    await rows.first().getByRole("button", { name: /^Details / }).click();
    const drawer = page.getByRole("dialog");
    await drawer.getByText("Attempts (2 failed)").waitFor();
    expect(await drawer.getByLabel("payload").textContent()).toContain('"card_number": "[redacted]"');
    expect(await drawer.locator(".attempt").count()).toBe(2);
    await expectAccessible(page);
    await shot(page, "job-detail");
    await page.keyboard.press("Escape");
    await page.close();
  }, 60_000);

  it("one click retries a dead letter: it leaves the table and runs", async () => {
    await fetch(`${billing.url}/fix`, { method: "POST" });
    const page = await context.newPage();
    await page.goto("/dead-letters?service=billing");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(3);
    const id = (await rows.first().getAttribute("data-row"))!.split("/")[1]!;
    await rows.first().getByRole("button", { name: `Retry ${id}` }).click();
    await poll(() => page.locator(`tr[data-row="billing/${id}"]`).count()).toBe(0);
    await page.getByText(`Requeued ${id} on billing.`).waitFor();
    await eventually("billing's dead count to drop to 2", async () => (await queueStats(billing.url)).depths.dead === 2);
    // It ran: the job is completed (or already gone), not waiting and not dead.
    await eventually("the retried job to complete", async () => {
      const { body } = await adminCall(billing.url, BILLING_VIEWER, "jobs.get", { id });
      const job = body.result.data.job;
      return job === null || job.state === "completed";
    });
    await page.close();
  }, 60_000);

  it("groups dead letters by error and bulk-retries after showing the count", async () => {
    const page = await context.newPage();
    await page.goto("/dead-letters?service=billing");
    await page.getByRole("button", { name: "Grouped by error" }).click();
    const groups = page.getByRole("table", { name: "Error groups" });
    // Two dead letters that differ only in their invoice number are one group.
    await poll(() => groups.locator("tbody tr").count()).toBe(1);
    const group = groups.locator("tbody tr");
    expect(await group.locator("td.num").textContent()).toBe("2");
    expect(await group.textContent()).toMatch(/CardDeclined\s*card declined for invoice inv-<\w+>-<n>/);
    await shot(page, "dead-letter-groups");
    await page.getByRole("button", { name: "Table" }).click();
    await page.getByRole("button", { name: "Retry all matching…" }).click();
    const dialog = page.getByRole("dialog");
    await poll(() => dialog.locator('[data-preview="billing"]').textContent()).toBe("2 dead letters");
    await shot(page, "bulk-retry");
    await dialog.getByRole("button", { name: "Retry 2 dead letters" }).click();
    await page.getByText("Requeued 2 dead letters.").waitFor();
    await eventually("billing to have no dead letters", async () => (await queueStats(billing.url)).depths.dead === 0);
    await poll(() => page.getByText("No dead letters").count()).toBe(1);
    await page.close();
  }, 60_000);

  it("shows the audit trail of those actions", async () => {
    const page = await context.newPage();
    await page.goto("/audit");
    const table = page.getByRole("table", { name: "Audit trail" });
    await poll(() => table.getByText("deadLetters.retryMatching").count()).toBe(1);
    expect(await table.getByText("deadLetters.retry", { exact: true }).count()).toBe(1);
    expect(await table.getByText("ops").count()).toBe(2);
    await expectAccessible(page);
    await shot(page, "audit");
    await page.close();
  }, 60_000);

  it("draws the contracts graph and finds the receipt.registered edge", async () => {
    const page = await context.newPage();
    await page.goto("/contracts");
    const graph = page.getByRole("group", { name: "Contracts graph" });
    await graph.waitFor();
    const edge = graph.getByRole("button", { name: "subscribes: receipt.registered to alert" });
    // Keyboard reachable: focus the edge and press Enter.
    await edge.focus();
    await page.keyboard.press("Enter");
    await page.getByLabel("edge detail").getByText("seen in billing, shipping").waitFor();
    expect(await graph.getByRole("button", { name: /^publishes: billing to receipt.registered/ }).count()).toBe(1);
    await expectAccessible(page);
    await shot(page, "contracts");
    await page.close();
  }, 60_000);

  it("renders jobs search, schedules and outbox with their empty states", async () => {
    const page = await context.newPage();
    for (const [route, heading, text] of [
      ["/schedules", "Schedules", "No scheduler"],
      ["/outbox", "Outbox", "No outbox"],
      ["/jobs", "Jobs", "Search by job id"],
    ] as const) {
      await page.goto(route);
      await page.getByRole("heading", { name: heading }).waitFor();
      await page.getByText(text).first().waitFor();
      await expectAccessible(page);
      await shot(page, route.slice(1));
    }
    await page.close();
  }, 60_000);

  it("shows a service that went down as down, without breaking the page", async () => {
    await shipping.stop();
    const page = await context.newPage();
    await page.goto("/");
    const shippingCard = page.getByRole("region", { name: "service shipping" });
    await shippingCard.getByText("down", { exact: true }).waitFor({ timeout: 20_000 });
    expect(await shippingCard.getByRole("alert").textContent()).toMatch(/shipping is unreachable|ECONNREFUSED|fetch failed/);
    await poll(() => page.getByRole("region", { name: "service billing" }).locator('[data-stat="Dead"] .stat-value').textContent()).toBe("0");
    await shot(page, "service-down");
    await page.close();
  }, 60_000);
});
