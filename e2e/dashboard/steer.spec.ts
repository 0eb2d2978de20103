import { expect } from "@playwright/test";
import { test } from "./fixtures.js";
import { expectAccessible, signedIn } from "./page-checks.js";

/**
 * Operators steer from the dashboard (docs/dashboard.md#steering): a schedule made, paused, triggered and deleted on
 * the Schedules page; a dead letter retried with an edited payload from its drawer; a job made with "New job"; a
 * scheduled job's payload and priority edited from its drawer. Each screen checked with axe in both color schemes.
 */
test.describe.configure({ mode: "serial", timeout: 180_000 });

test.describe("steering in a browser", () => {

  test("creates, pauses, triggers and deletes a schedule; a declared one says it lives in code", async ({ session: context }) => {
    const page = await context.newPage();
    try {
      await signedIn(page, "/schedules");
      await page.getByRole("heading", { name: "Schedules", level: 1 }).waitFor();
      const table = page.getByRole("table", { name: "Schedules of billing" });
      await expect(table.locator("tbody tr", { hasText: "nightly-ping" })).toContainText("declared in code");

      await page.getByRole("button", { name: "New schedule on billing" }).click();
      const form = page.getByRole("dialog", { name: "New schedule on billing" });
      await form.getByLabel("Name").fill("steer-ping");
      await form.getByLabel("Task").selectOption("billing.ping");
      await form.getByLabel("Cron expression").fill("0 0 L * *");
      await form.getByRole("button", { name: "Create schedule" }).click();
      // Refused as a declaration would be, nothing stored.
      await expect(form.getByRole("alert")).toContainText("CRON_INVALID");
      await form.getByLabel("Cron expression").fill("*/5 * * * *");
      await form.getByLabel("Payload (JSON)").fill('{"from":"dashboard"}');
      await expectAccessible(page);
      await form.getByRole("button", { name: "Create schedule" }).click();
      await expect(page.getByRole("status").filter({ hasText: "Created schedule steer-ping on billing." })).toBeVisible();
      const row = table.locator("tbody tr", { hasText: "steer-ping" });
      await expect(row).toContainText("made at run time");
      await expect(row).toContainText("active");

      await row.getByRole("button", { name: "Pause steer-ping" }).click();
      const pause = page.getByRole("dialog", { name: "Pause schedule steer-ping" });
      await expectAccessible(page);
      await pause.getByRole("button", { name: "Pause steer-ping" }).click();
      await expect(row).toContainText("paused");

      await row.getByRole("button", { name: "Trigger steer-ping" }).click();
      await page.getByRole("dialog", { name: "Trigger schedule steer-ping" }).getByRole("button", { name: "Trigger steer-ping" }).click();
      await expect(page.getByRole("status").filter({ hasText: /Triggered steer-ping on billing: job [0-9a-f-]{36}\./ })).toBeVisible();

      await row.getByRole("button", { name: "Delete steer-ping" }).click();
      await page.getByRole("dialog", { name: "Delete schedule steer-ping" }).getByRole("button", { name: "Delete steer-ping" }).click();
      await expect(table.locator("tbody tr", { hasText: "steer-ping" })).toHaveCount(0);
      await expectAccessible(page);
    } finally {
      await page.close();
    }
  });

  test("retries a dead letter with an edited payload from its drawer, and makes a job", async ({ session: context }) => {
    const page = await context.newPage();
    try {
      await signedIn(page, "/dead-letters");
      const first = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr", { hasText: "billing.charge" }).first();
      await first.getByRole("button", { name: /^Details of / }).click();
      const drawer = page.getByRole("dialog", { name: /^billing\.charge · / });
      const editor = drawer.getByLabel("Payload to retry with (JSON)");
      await editor.fill("{ not json");
      await drawer.getByRole("button", { name: "Retry with this payload" }).click();
      await expect(drawer.getByRole("alert")).toContainText("not JSON");
      await editor.fill('{"invoice":"edited-in-browser"}');
      await expectAccessible(page);
      await drawer.getByRole("button", { name: "Retry with this payload" }).click();
      await expect(page.getByRole("status").filter({ hasText: /with the edited payload as job [0-9a-f-]{36}\./ })).toBeVisible();

      await page.goto("/jobs");
      await page.getByRole("button", { name: "New job" }).click();
      const dialog = page.getByRole("dialog", { name: "New job" });
      await dialog.getByLabel("Service").selectOption("billing");
      await dialog.getByLabel("Task").selectOption("billing.ping");
      await dialog.getByLabel("Payload (JSON)").fill('{"made":"in the browser"}');
      await dialog.getByLabel("Tenant").fill("acme");
      await expectAccessible(page);
      await dialog.getByRole("button", { name: "Enqueue job" }).click();
      await expect(page.getByRole("status").filter({ hasText: /Enqueued job [0-9a-f-]{36} \(billing\.ping\) on billing\./ })).toBeVisible();
    } finally {
      await page.close();
    }
  });

  test("edits a scheduled job's payload and priority from its drawer", async ({ session: context }) => {
    const page = await context.newPage();
    try {
      await signedIn(page, "/jobs");
      await page.getByRole("button", { name: "New job" }).click();
      const dialog = page.getByRole("dialog", { name: "New job" });
      await dialog.getByLabel("Service").selectOption("billing");
      await dialog.getByLabel("Task").selectOption("billing.ping");
      await dialog.getByLabel("Payload (JSON)").fill('{"edit":"before"}');
      await dialog.getByLabel("Delay (seconds)").fill("3600");
      await dialog.getByRole("button", { name: "Enqueue job" }).click();
      const made = page.getByRole("status").filter({ hasText: /Enqueued job [0-9a-f-]{36}/ });
      const id = /Enqueued job ([0-9a-f-]{36})/.exec((await made.textContent()) ?? "")![1]!;

      await page.goto("/jobs/states?service=billing&state=scheduled");
      await page.getByRole("button", { name: `Details of ${id}` }).click();
      const drawer = page.getByRole("dialog", { name: `billing.ping · ${id}` });
      await drawer.getByRole("button", { name: "Edit" }).click();
      const form = drawer.getByRole("form", { name: "Edit job" });
      const editor = form.getByLabel("Payload (JSON)");
      await expect(editor).toHaveValue(/"edit": "before"/);
      await editor.fill("{ not json");
      await form.getByRole("button", { name: "Save changes" }).click();
      await expect(form.getByRole("alert")).toContainText("not JSON");
      await editor.fill('{"edit":"after"}');
      await form.getByLabel("Priority (0 runs first, 9 last)").fill("1");
      await expectAccessible(page);
      await form.getByRole("button", { name: "Save changes" }).click();
      await expect(drawer.getByRole("status")).toContainText(`Updated ${id} on billing: scheduled, priority 1, 1 payload change.`);
      await expect(drawer.getByLabel("payload", { exact: true })).toContainText('"edit": "after"');
      await expect(drawer.locator("[data-priority]")).toHaveAttribute("data-priority", "1");
    } finally {
      await page.close();
    }
  });
});
