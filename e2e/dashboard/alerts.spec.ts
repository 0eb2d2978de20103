import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "@playwright/test";
import { SCREENSHOTS, TOKENS, adminCall, test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * The Alerts page (docs/alerts.md#the-alerts-page) in a real browser: a rule made at run time on billing (PostgreSQL)
 * fires, its webhook (a receiver on loopback) gets the notification, and the page shows the rule firing and the
 * delivered notification in its history; an operator creates a rule with the New alert form and deletes it.
 */
const { billingOperator: BILLING_OPERATOR } = TOKENS;

test.describe.configure({ mode: "serial", timeout: 180_000 });

test.describe("alerts in a browser", () => {

  test("shows a firing alert and its delivered notification", async ({ session: context, stack: { billing } }) => {
    const bodies: Array<Record<string, unknown>> = [];
    const server: Server = createServer((request, response) => {
      let text = "";
      request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      request.on("end", () => {
        bodies.push(JSON.parse(text) as Record<string, unknown>);
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const webhook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/e2e`;
    const name = "billing short of workers";
    // Billing runs one worker: fewer than 10 fires at the evaluator's next pass.
    const created = await adminCall(billing.url, BILLING_OPERATOR, "alerts.create", { name, rule: "workers_below", threshold: 10, window: "1m", webhook }, true);
    expect(created.status).toBe(200);
    const page = await context.newPage();
    try {
      await expect.poll(() => bodies.length, { timeout: 60_000 }).toBeGreaterThan(0);
      expect(bodies[0]).toMatchObject({ alert: name, rule: "workers_below", state: "firing", threshold: 10, service: "billing" });

      await signedIn(page, "/alerts");
      await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor();
      await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Alerts" })).toHaveAttribute("aria-current", "page");
      const rules = page.getByRole("table", { name: "Alert rules of billing", exact: true });
      const row = rules.locator("tbody tr", { hasText: name });
      await expect(row).toContainText("firing");
      await expect(row).toContainText("workers_below");
      await expect(row).toContainText("run time");
      const history = page.getByRole("table", { name: "Alert history of billing", exact: true });
      await expect(history.locator("tbody tr", { hasText: name })).toContainText("delivered");
      await expect(page.getByRole("region", { name: "alerts of billing" })).toContainText("1 firing");
      await expectAccessible(page);
      await page.emulateMedia({ colorScheme: "light" });
      await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-alerts.png"), fullPage: true });
    } finally {
      await page.close();
      await adminCall(billing.url, BILLING_OPERATOR, "alerts.delete", { name }, true);
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("creates an alert from the New alert form, refuses a bad window, and deletes it", async ({ session: context }) => {
    const page = await context.newPage();
    const name = "billing charges dying";
    try {
      await signedIn(page, "/alerts");
      await page.getByRole("button", { name: "New alert on billing" }).click();
      const form = page.getByRole("form", { name: "New alert" });
      await form.getByLabel("Name", { exact: true }).fill(name);
      await form.getByLabel("Rule").selectOption("dead_letters");
      await form.getByLabel("Scope").selectOption("task");
      await form.getByLabel("Task", { exact: true }).fill("billing.charge");
      await form.getByLabel("Threshold", { exact: true }).fill("3");
      await form.getByLabel("Window", { exact: true }).fill("five minutes");
      await form.getByLabel(/Webhook URL/).fill("https://hooks.example.com/jfast/secret");
      await expectAccessible(page);
      await form.getByRole("button", { name: "Create alert" }).click();
      await expect(form.getByRole("alert")).toContainText('window is a duration such as "5m"');
      await form.getByLabel("Window", { exact: true }).fill("10m");
      await form.getByRole("button", { name: "Create alert" }).click();
      await expect(page.getByRole("status").filter({ hasText: `Created alert ${name} on billing.` })).toBeVisible();
      const row = page.getByRole("table", { name: "Alert rules of billing", exact: true }).locator("tbody tr", { hasText: name });
      await expect(row).toContainText("task billing.charge");
      await expect(row).toContainText("10m");
      await expect(row).toContainText("https://hooks.example.com/…");

      await row.getByRole("button", { name: `Delete ${name}` }).click();
      await page.getByRole("button", { name: `Delete ${name}` }).last().click();
      await expect(page.getByRole("status").filter({ hasText: `Deleted alert ${name} on billing.` })).toBeVisible();
      await expect(page.getByRole("table", { name: "Alert rules of billing", exact: true }).locator("tbody tr", { hasText: name })).toHaveCount(0);
    } finally {
      await page.close();
    }
  });

  test("the New alert form asks a promise for when, then and within, and a kafka_lag rule for its topic; billing, with no Kafka, refuses both by name", async ({ session: context }) => {
    const page = await context.newPage();
    try {
      await signedIn(page, "/alerts");
      await page.getByRole("button", { name: "New alert on billing" }).click();
      const form = page.getByRole("form", { name: "New alert" });
      await form.getByLabel("Name", { exact: true }).fill("paid invoices ship");
      // A promise has no scope: the event that makes it, the one that keeps it, and the time between.
      await form.getByLabel("Rule").selectOption("promise");
      await expect(form.getByLabel("Scope")).toHaveCount(0);
      await form.getByLabel("When", { exact: true }).fill("invoice.paid");
      await form.getByLabel("Then", { exact: true }).fill("shipment.created");
      await form.getByLabel("Within", { exact: true }).fill("5m");
      await form.getByLabel("Threshold", { exact: true }).fill("1");
      await form.getByLabel(/Webhook URL/).fill("https://hooks.example.com/jfast/promise");
      await expectAccessible(page);
      await form.getByRole("button", { name: "Create alert" }).click();
      // Billing keeps an outbox but has no Kafka: the service says what is missing and where to read why.
      await expect(form.getByRole("alert")).toContainText('alert "paid invoices ship" is a promise');
      await expect(form.getByRole("alert")).toContainText("kafka is not enabled here");
      await expect(form.getByRole("alert")).toContainText("alerts#promises");

      // kafka_lag: the scope is one Kafka topic (or every topic the handlers consume).
      await form.getByLabel("Name", { exact: true }).fill("parcels piling up");
      await form.getByLabel("Rule").selectOption("kafka_lag");
      await expect(form.getByLabel("When", { exact: true })).toHaveCount(0);
      await form.getByLabel("Scope").selectOption("topic");
      await form.getByLabel("Topic", { exact: true }).fill("parcels");
      await form.getByLabel("Threshold", { exact: true }).fill("1000");
      await form.getByRole("button", { name: "Create alert" }).click();
      await expect(form.getByRole("alert")).toContainText("is a kafka_lag rule, and this service has no Kafka: configure [plugin.kafka]");
      // Neither was made.
      const rules = page.getByRole("table", { name: "Alert rules of billing", exact: true });
      await expect(rules.locator("tbody tr", { hasText: "paid invoices ship" })).toHaveCount(0);
      await expect(rules.locator("tbody tr", { hasText: "parcels piling up" })).toHaveCount(0);
    } finally {
      await page.close();
    }
  });
});
