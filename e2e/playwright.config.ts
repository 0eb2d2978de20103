import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "@playwright/test";

const REPO = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** Where CI keeps its logs (gitignored): the HTML report, and each failed test's trace and screenshots. */
const LOGS = path.join(REPO, ".ci", "logs");

/**
 * The dashboard's browser suite (e2e/dashboard/*.spec.ts) on Debian's Chromium; the rest of e2e/ runs on vitest.
 * Its services start in the worker fixture of e2e/dashboard/fixtures.ts; the tests share them, in order.
 */
export default defineConfig({
  testDir: "dashboard",
  testMatch: "**/*.spec.ts",
  outputDir: path.join(LOGS, "playwright-results"),
  reporter: [["list"], ["html", { outputFolder: path.join(LOGS, "playwright-report"), open: "never" }]],
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  // Real processes on a machine that may be busy: generous bounds, never performance claims.
  timeout: 60_000,
  expect: { timeout: 20_000 },
  use: {
    browserName: "chromium",
    viewport: { width: 1280, height: 860 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
});
